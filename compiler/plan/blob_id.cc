#include "compiler/plan/blob_id.h"

#include "compiler/base/sha256.h"

namespace mlenv::plan {

BlobId hash_blob(std::string_view bytes) {
  return git_blob_sha1(bytes);
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
