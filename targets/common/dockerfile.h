#pragma once
// The Dockerfile of an env's image, the same on every platform: a build stage compiling
// mlenv-boot from the output root's `_runtime/` against the base image's CUDA and NCCL, then the
// environment. It holds nothing of the env beyond its image and tools, so the envs that run one
// image hold the same bytes and the platform builds it once (EnvLayout::image_name).

#include <string>

#include "targets/common/env_layout.h"

namespace mlenv::target {

/// Where the compiler writes the runtime sources for image builds, relative to the output root.
inline constexpr const char* kRuntimeDir = "_runtime";
/// The image's user (`USER`): Kubernetes runs non-root pods as it, OpenShift as an arbitrary
/// UID of group 0.
inline constexpr int kImageUid = 1001;

/// The Dockerfile; `build_command` is how the target builds it, with its build context (shown
/// in its header comment; it names no env directory: `-f <this Dockerfile>`).
std::string dockerfile(const EnvLayout& layout, const std::string& build_command);

}  // namespace mlenv::target
