#pragma once
// SHA-256 (FIPS 180-4) for content hashes in plan.json, from OpenSSL's libcrypto.

#include <string>
#include <string_view>

namespace mlenv {

/// The SHA-256 digest of `bytes` as 64 lower-case hex characters.
std::string sha256_hex(std::string_view bytes);

}  // namespace mlenv
