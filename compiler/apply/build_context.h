#pragma once
// The build context apply hands an image build: a temporary copy of only the files the build
// reads, so that a cluster's build (which uploads its directory) never receives the whole plan
// directory (every env's files, Slurm logs, squashfs images).

#include <string>
#include <vector>

namespace mlenv::plan {

/// One path of a build context: `from` under the plan root, copied to `to` in the context.
struct ContextPath {
  std::string from;
  std::string to;
};

/// What the build of `dockerfile` (relative to the plan root) reads: the Dockerfile, as
/// `Dockerfile` at the context's root (where a build that names no path finds it: the envs
/// that share an image share its build in the cluster, which can name no env's directory), and
/// mlenv-boot's sources; targets/common/dockerfile.cc COPYs nothing else from its context.
std::vector<ContextPath> build_context_paths(const std::string& dockerfile);

/// A temporary directory holding copies of those of `paths` (from under `root`) that exist;
/// symbolic links are copied as links, never followed. Removed with the object.
class BuildContext {
 public:
  BuildContext(const std::string& root, const std::vector<ContextPath>& paths);
  ~BuildContext();
  BuildContext(const BuildContext&) = delete;
  BuildContext& operator=(const BuildContext&) = delete;

  /// The directory, "" when it could not be made (error() says why).
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

}  // namespace mlenv::plan
