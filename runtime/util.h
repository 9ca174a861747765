#pragma once
// Small text and file helpers shared by every phase of mlenv-boot.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boot {

/// The whole content of a file, or nothing when it cannot be read (sysfs reads fail with EINVAL).
std::optional<std::string> read_file(const std::string& path);

/// Writes through a temporary file and rename, so a reader on a shared volume never sees half.
bool write_file_atomic(const std::string& path, std::string_view content);

/// Creates the folders above a file (mode 0755); false when one cannot be created.
bool make_parent_dirs(const std::string& path);

/// The text without leading and trailing whitespace.
std::string_view trim(std::string_view text);

/// A non-negative decimal integer that fills the whole text, as env values and ordinals need.
std::optional<std::int64_t> parse_uint(std::string_view text);

/// Splits on a separator, keeping empty pieces.
std::vector<std::string> split(std::string_view text, char separator);

/// Joins with a separator.
std::string join(const std::vector<std::string>& pieces, std::string_view separator);

/// The names in a directory, sorted, or empty when it is missing.
std::vector<std::string> list_dir(const std::string& path);

/// Whether a path exists (following symlinks).
bool path_exists(const std::string& path);

}  // namespace boot
