#include "compiler/base/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace mlenv {
namespace {

// One digest context per thread, reused: plan.json hashes tens of thousands of small files,
// where setting up a context would cost as much as the hashing. OpenSSL picks the fastest
// implementation the CPU has (SHA extensions, AVX2) at run time; libgit2 already loads it.
struct Digest {
  explicit Digest(const char* name) : md(EVP_MD_fetch(nullptr, name, nullptr)) {}
  EVP_MD* md;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Digest() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
  }
};

}  // namespace

std::string hex_text(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  thread_local Digest digest("SHA256");
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!digest.md || !digest.ctx || !EVP_DigestInit_ex2(digest.ctx, digest.md, nullptr) ||
      !EVP_DigestUpdate(digest.ctx, bytes.data(), bytes.size()) ||
      !EVP_DigestFinal_ex(digest.ctx, sum, &size) || size != 32) {
    throw std::runtime_error("SHA-256 is not available from OpenSSL's libcrypto");
  }
  return hex_text(std::string_view(reinterpret_cast<const char*>(sum), size));
}

namespace {

// SHA-1 of the concatenation of `parts`.
std::array<unsigned char, 20> sha1_of(std::initializer_list<std::string_view> parts) {
  thread_local Digest digest("SHA1");
  std::array<unsigned char, 20> id{};
  unsigned int size = 0;
  bool ok = digest.md && digest.ctx && EVP_DigestInit_ex2(digest.ctx, digest.md, nullptr);
  for (std::string_view part : parts) {
    ok = ok && EVP_DigestUpdate(digest.ctx, part.data(), part.size());
  }
  if (!ok || !EVP_DigestFinal_ex(digest.ctx, id.data(), &size) || size != id.size()) {
    throw std::runtime_error("SHA-1 is not available from OpenSSL's libcrypto");
  }
  return id;
}

}  // namespace

std::array<unsigned char, 20> sha1(std::string_view bytes) {
  return sha1_of({bytes});
}

std::array<unsigned char, 20> git_blob_sha1(std::string_view bytes) {
  std::string header = "blob " + std::to_string(bytes.size());
  // The header's terminating NUL is part of what git hashes.
  return sha1_of({std::string_view(header.c_str(), header.size() + 1), bytes});
}

}  // namespace mlenv
