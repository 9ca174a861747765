#pragma once
// Hard limits that keep any input, however hostile, to bounded time and memory. Each one that
// is reached becomes a diagnostic, never a crash.

#include <cstddef>

namespace mlenv::limits {

inline constexpr std::size_t kMaxFileBytes = 4 * 1024 * 1024;  ///< one source file
inline constexpr std::size_t kMaxNestingDepth = 64;   ///< blocks and lists inside each other
inline constexpr std::size_t kMaxListLength = 10000;  ///< elements of one list literal
inline constexpr std::size_t kMaxExtendsChain = 64;   ///< `extends` links from one declaration
inline constexpr std::size_t kMaxFiles = 1024;        ///< files loaded by one compilation
/// The bytes of all files one compilation loads: 1,023 imported 4 MiB files took 8.43 GB.
inline constexpr std::size_t kMaxSourceBytes = 16 * 1024 * 1024;
/// Envs of one program: each is lowered, rendered and kept whole (50,000 took 1.19 GB to build).
inline constexpr std::size_t kMaxEnvs = 10000;
/// Bytes one fetch of a git source may receive (`mlenvc get`); its files count as source files.
inline constexpr std::size_t kMaxFetchBytes = 256 * 1024 * 1024;
inline constexpr std::size_t kMaxStringBytes = 1024 * 1024;  ///< one string after interpolation
/// All values one compilation builds: strings, and list and block copies (copy on write).
inline constexpr std::size_t kMaxValueBytes = 128 * 1024 * 1024;

}  // namespace mlenv::limits
