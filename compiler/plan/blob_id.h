#pragma once
// Git blob ids of plan files. Comparing ids instead of bytes lets a plan of a 1,000-env fleet
// read only the blobs that changed from the object database.

#include <array>
#include <string>
#include <string_view>

namespace mlenv::plan {

/// The SHA-1 git gives a blob: equal ids mean equal bytes.
using BlobId = std::array<unsigned char, 20>;

/// The id git would give a blob holding `bytes` (nothing is written).
BlobId hash_blob(std::string_view bytes);

/// 40 lower-case hex characters.
std::string to_hex(const BlobId& id);

}  // namespace mlenv::plan
