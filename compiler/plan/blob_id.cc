#include "compiler/plan/blob_id.h"

#include <git2.h>

#include <cstring>

namespace mlenv::plan {

BlobId hash_blob(std::string_view bytes) {
  git_oid oid;
  git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB);
  BlobId id;
  std::memcpy(id.data(), oid.id, id.size());
  return id;
}

std::string to_hex(const BlobId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (unsigned char byte : id) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

}  // namespace mlenv::plan
