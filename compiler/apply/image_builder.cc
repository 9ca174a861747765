#include "compiler/apply/image_builder.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "compiler/apply/runner.h"
#include "compiler/base/file_system.h"

namespace mlenv::plan {
namespace {

bool lower_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// `sha256:<64 hex>` at the start of `text`, or "".
std::string digest_at(std::string_view text) {
  constexpr std::string_view kPrefix = "sha256:";
  if (!text.starts_with(kPrefix) || text.size() < kPrefix.size() + 64) return "";
  std::string_view hex = text.substr(kPrefix.size(), 64);
  if (!lower_hex(hex)) return "";
  if (text.size() > kPrefix.size() + 64 && lower_hex(text.substr(kPrefix.size() + 64, 1)))
    return "";
  return std::string(text.substr(0, kPrefix.size() + 64));
}

}  // namespace

std::string find_image_builder() {
  for (const char* name : {"podman", "buildah", "docker"}) {
    if (std::optional<std::string> path = find_on_path(name)) return *path;
  }
  return "";
}

bool image_inputs_changed(const EnvPlan& env) {
  if (!env.applied) return true;
  if (env.runtime_tree != env.applied_runtime_tree) return true;
  auto id_of = [](const PlanTree& tree, const std::string& path) -> std::optional<BlobId> {
    const PlanEntry* entry = tree.find(path);
    return entry == nullptr ? std::nullopt : std::optional<BlobId>(entry->id);
  };
  const std::string dockerfile = env.dir + "/Dockerfile";
  return id_of(env.files, dockerfile) != id_of(env.applied_files, dockerfile);
}

std::vector<std::string> image_build_args(const std::string& dockerfile, const std::string& image,
                                          const std::string& context) {
  return {"build", "-f", dockerfile, "-t", image, context};
}

std::vector<std::string> image_push_args(const std::string& builder, const std::string& image,
                                         const std::string& digest_file) {
  // podman and buildah: `--digestfile` "after copying the image, write the digest of the
  // resulting image to the file" (containers/podman docs/source/markdown/options/digestfile.md,
  // containers/buildah docs/buildah-push.1.md). docker has no such flag.
  if (std::filesystem::path(builder).filename() == "docker") return {"push", image};
  return {"push", "--digestfile=" + digest_file, image};
}

std::string pushed_digest(const std::string& digest_file_text, const std::string& output) {
  std::string from_file = digest_at(digest_file_text);
  if (!from_file.empty()) return from_file;
  // docker: the daemon ends a push with `<tag>: digest: <digest> size: <bytes>`
  // (moby/moby distribution/push_v2.go, progress.Messagef).
  constexpr std::string_view kMarker = ": digest: ";
  std::string found;
  for (std::size_t at = 0; (at = output.find(kMarker, at)) != std::string::npos;) {
    at += kMarker.size();
    if (std::string digest = digest_at(std::string_view(output).substr(at)); !digest.empty())
      found = digest;
  }
  return found;
}

DigestFile::DigestFile() {
  const char* dir = getenv("TMPDIR");
  std::string pattern =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/mlenvc-digest-XXXXXX";
  int fd = mkstemp(pattern.data());
  if (fd < 0) throw std::runtime_error("cannot create a file in " + parent_path(pattern));
  close(fd);
  path_ = pattern;
}

DigestFile::~DigestFile() {
  unlink(path_.c_str());
}

std::string DigestFile::text() const {
  std::string error;
  return DiskFileSystem().read(path_, error).value_or("");
}

std::string image_repository(std::string_view image) {
  std::size_t at = image.find('@');
  if (at != std::string_view::npos) image = image.substr(0, at);
  std::size_t colon = image.rfind(':');
  std::size_t slash = image.rfind('/');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash))
    image = image.substr(0, colon);
  return std::string(image);
}

std::string digest_reference(const std::string& image, const std::string& digest) {
  return image_repository(image) + "@" + digest;
}

bool is_digest_reference(std::string_view reference) {
  std::size_t at = reference.find("@sha256:");
  if (at == 0 || at == std::string_view::npos) return false;
  std::string_view hex = reference.substr(at + 8);
  return hex.size() == 64 && lower_hex(hex) &&
         std::none_of(
             reference.begin(), reference.begin() + static_cast<std::ptrdiff_t>(at),
             [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\'; });
}

}  // namespace mlenv::plan
