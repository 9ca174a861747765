#pragma once
// Content hashes from OpenSSL's libcrypto: SHA-256 (FIPS 180-4) for plan.json, and the SHA-1
// git names a blob by.

#include <array>
#include <string>
#include <string_view>

namespace mlenv {

/// `bytes` as lower-case hex, two characters a byte (digests, random tokens).
std::string hex_text(std::string_view bytes);

/// The SHA-256 digest of `bytes` as 64 lower-case hex characters.
std::string sha256_hex(std::string_view bytes);

/// The SHA-1 digest of `bytes` (git's pack and index checksums).
std::array<unsigned char, 20> sha1(std::string_view bytes);

/// The id git gives a blob holding `bytes`: SHA-1 of `blob <size>\0` and the bytes. OpenSSL's
/// SHA-1 uses the CPU's SHA extensions, several times faster than the collision-detecting
/// SHA-1 libgit2 hashes with, and gives the same id for every input that is not a crafted
/// collision.
std::array<unsigned char, 20> git_blob_sha1(std::string_view bytes);

}  // namespace mlenv
