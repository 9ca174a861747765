#pragma once
// The image builder apply runs where mlenvc builds an env's image itself instead of the cluster
// (every platform but OpenShift): podman, buildah or docker, the first on PATH. They take the
// same build arguments; each reports the digest of a pushed image its own way, and workloads
// run the image by that digest, never by a tag that a rebuild moves.

#include <string>
#include <string_view>
#include <vector>

#include "compiler/apply/env_plan.h"

namespace mlenv::plan {

/// Whether what goes into `env`'s image changed since its applied record: its Dockerfile or the
/// mlenv-boot sources in `_runtime/` (or there is no record). Otherwise apply runs the image it
/// ran last, so an unchanged apply neither rebuilds nor restarts anything for it.
bool image_inputs_changed(const EnvPlan& env);

/// The first of podman, buildah and docker on PATH, or "" when none is.
std::string find_image_builder();

/// `build -f DOCKERFILE -t IMAGE CONTEXT`: the arguments after the builder.
std::vector<std::string> image_build_args(const std::string& dockerfile, const std::string& image,
                                          const std::string& context);

/// `push IMAGE`, with `--digestfile=DIGEST_FILE` for podman and buildah (`builder` is its path),
/// which write the pushed manifest's digest there; docker prints it instead.
std::vector<std::string> image_push_args(const std::string& builder, const std::string& image,
                                         const std::string& digest_file);

/// The digest (`sha256:<64 hex>`) of a push: the digest file's text (podman, buildah), else the
/// `<tag>: digest: sha256:<hex> size: <n>` line docker prints; "" when neither holds one.
std::string pushed_digest(const std::string& digest_file_text, const std::string& output);

/// A temporary file a push writes its digest to (podman, buildah), removed with it.
class DigestFile {
 public:
  DigestFile();  ///< throws std::runtime_error when no file can be made
  ~DigestFile();
  DigestFile(const DigestFile&) = delete;
  DigestFile& operator=(const DigestFile&) = delete;
  const std::string& path() const { return path_; }
  /// Its text ("" when unreadable).
  std::string text() const;

 private:
  std::string path_;
};

/// `<repository>@<digest>` for `image` (`<repository>[:<tag>]`).
std::string digest_reference(const std::string& image, const std::string& digest);

/// The repository of `image`: without its `:<tag>` or `@<digest>` (a registry's `:port` stays).
std::string image_repository(std::string_view image);

/// Whether `reference` is an image pinned by digest (`<repository>@sha256:<64 hex>`), as a
/// cluster or a push reports it: the only value that may replace a workload's image.
bool is_digest_reference(std::string_view reference);

}  // namespace mlenv::plan
