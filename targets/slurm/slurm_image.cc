#include "targets/slurm/slurm_image.h"

#include <algorithm>
#include <filesystem>

#include "compiler/apply/image_builder.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"
#include "targets/slurm/slurm_pin.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

bool hex64(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The image ID a build's `--iidfile` holds (`sha256:<hex>`, or the bare hex), "" when none.
std::string image_id(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.starts_with("sha256:")) text.erase(0, 7);
  return hex64(text) ? text : "";
}

// Runs `argv` under --timeout, its output on the caller's (captured first with `capture`);
// nullopt with E0706.
std::optional<RunResult> run(const ApplyRequest& request, const std::string& unit,
                             const std::vector<std::string>& argv, std::ostream& out,
                             Diagnostics& diagnostics, bool capture = false) {
  out << "$ " << shell_words(argv) << '\n';
  out.flush();
  RunResult result = run_command(argv, "", *parse_duration(request.steps.timeout), capture);
  out << printable(result.output, true);
  if (result.status == 0 && !result.timed_out) return result;
  diagnostics.report(
      Code::E0706, {},
      unit + ": `" + shell_words(argv) + "` exited with status " + std::to_string(result.status),
      "its own message is above; nothing was submitted");
  return std::nullopt;
}

// `builder` (its path) and its arguments `args`.
std::vector<std::string> command(const std::string& builder, std::vector<std::string> args) {
  args.insert(args.begin(), builder);
  return args;
}

// Links the image's squashfs `from` (absolute) into the env's logs/.applied/ under its own name
// (the image's ID); the relative path, or nullopt with E0730. A hard link: one file on disk,
// which stays while any env's directory names it; a copy where the file system has none.
std::optional<std::string> link_image(const ApplyRequest& request, const EnvPlan& env,
                                      const std::string& env_dir, const std::string& from,
                                      std::ostream& out, Diagnostics& diagnostics) {
  const std::string relative = std::string(kAppliedDir) + "/" + fs::path(from).filename().string();
  const std::string to = env_dir + "/" + relative;
  out << env.unit << ": image built for another env of it, "
      << (request.dry_run ? "would link " : "linking ") << from << '\n';
  std::error_code error;
  if (request.dry_run || fs::equivalent(from, to, error)) return relative;
  std::string why;
  if (!make_applied_dir(env_dir, why)) {
    diagnostics.report(Code::E0730, {}, env.unit + ": " + why, "nothing was submitted");
    return std::nullopt;
  }
  fs::remove(to, error);
  fs::create_hard_link(from, to, error);
  if (error) fs::copy_file(from, to, error);
  if (error) {
    diagnostics.report(Code::E0730, {},
                       env.unit + ": cannot link " + from + " to " + to + ": " + error.message(),
                       "nothing was submitted");
    return std::nullopt;
  }
  return relative;
}

}  // namespace

std::string squashfs_path(std::string_view id_hex) {
  return std::string(kAppliedDir) + "/image-" + std::string(id_hex) + ".sqsh";
}

bool is_squashfs_path(std::string_view path) {
  const std::string prefix = std::string(kAppliedDir) + "/image-";
  return path.starts_with(prefix) && path.ends_with(".sqsh") &&
         hex64(path.substr(prefix.size(), path.size() - prefix.size() - 5));
}

std::optional<std::string> pushed_slurm_image(const ApplyRequest& request, const EnvPlan& env,
                                              const PlanAction& action, PushedImages& pushed,
                                              std::ostream& out, Diagnostics& diagnostics) {
  if (is_digest_reference(env.applied_image) && !image_inputs_changed(env) &&
      image_repository(env.applied_image) == image_repository(action.image)) {
    out << env.unit << ": image unchanged, " << env.applied_image << '\n';
    pushed.emplace(action.image, env.applied_image);
    return env.applied_image;
  }
  if (auto shared = pushed.find(action.image); shared != pushed.end()) {
    out << env.unit << ": image pushed for another env of it, " << shared->second << '\n';
    return shared->second;
  }
  const std::string builder = find_image_builder();
  const std::string shown = builder.empty() ? "podman" : builder;
  const std::vector<std::string> build = command(
      shown,
      image_build_args(env.plan_root + "/" + action.dockerfile, action.image, env.plan_root));
  if (request.dry_run) {
    out << "$ " << shell_words(build) << '\n';
    out << "$ " << shell_words(command(shown, image_push_args(shown, action.image, "<file>")))
        << '\n';
    return pushed[action.image] = image_repository(action.image) + "@sha256:<digest>";
  }
  if (builder.empty()) {
    diagnostics.report(Code::E0703, {},
                       env.unit +
                           ": its image must be built and pushed, and no podman, buildah "
                           "or docker is on PATH",
                       "apply it from a host that has one and can push to the registry");
    return std::nullopt;
  }
  if (!run(request, env.unit, build, out, diagnostics)) return std::nullopt;
  DigestFile digest_file;
  const std::vector<std::string> push =
      command(builder, image_push_args(builder, action.image, digest_file.path()));
  std::optional<RunResult> result = run(request, env.unit, push, out, diagnostics, true);
  if (!result) return std::nullopt;
  const std::string digest = pushed_digest(digest_file.text(), result->output);
  if (digest.empty()) {
    diagnostics.report(Code::E0712, {},
                       env.unit + ": `" + shell_words(push) + "` printed no image digest",
                       "the job runs the image by the digest its push reports; nothing was "
                       "submitted");
    return std::nullopt;
  }
  return pushed[action.image] = digest_reference(action.image, digest);
}

std::optional<std::string> slurm_image(const ApplyRequest& request, const EnvPlan& env,
                                       const std::string& recorded, const std::string& env_dir,
                                       const PlanAction& action, ImportedImages& imported,
                                       std::ostream& out, Diagnostics& diagnostics) {
  std::error_code error;
  if (!recorded.empty() && !image_inputs_changed(env) &&
      fs::is_regular_file(env_dir + "/" + recorded, error)) {
    out << env.unit << ": image unchanged, " << recorded << '\n';
    return recorded;
  }
  if (auto shared = imported.find(action.image); shared != imported.end())
    return link_image(request, env, env_dir, shared->second, out, diagnostics);
  const std::string builder = find_image_builder();
  const std::optional<std::string> enroot = find_on_path("enroot");
  // enroot reads a built image from the engine that holds it: dockerd:// from docker's daemon,
  // podman:// from containers-storage (podman and buildah) (NVIDIA/enroot src/docker.sh,
  // docker::daemon::import).
  const std::string scheme = fs::path(builder).filename() == "docker" ? "dockerd://" : "podman://";
  std::vector<std::string> build = command(
      builder.empty() ? "podman" : builder,
      image_build_args(env.plan_root + "/" + action.dockerfile, action.image, env.plan_root));
  if (request.dry_run) {
    build.insert(build.begin() + 2, "--iidfile=<file>");
    out << "$ " << shell_words(build) << '\n';
    out << "$ enroot import -o " << env_dir << "/" << squashfs_path("<id>") << " " << scheme
        << "<id>\n";
    imported[action.image] = env_dir + "/" + squashfs_path("<id>");
    return squashfs_path("<id>");
  }
  if (builder.empty() || !enroot) {
    diagnostics.report(Code::E0703, {},
                       env.unit + ": its image must be built and imported, and " +
                           (builder.empty() ? "no podman, buildah or docker" : "no enroot") +
                           " is on PATH",
                       "apply it from a host of the cluster that has both");
    return std::nullopt;
  }
  DigestFile id_file;
  build.insert(build.begin() + 2, "--iidfile=" + id_file.path());
  if (!run(request, env.unit, build, out, diagnostics)) return std::nullopt;
  const std::string id = image_id(id_file.text());
  if (id.empty()) {
    diagnostics.report(Code::E0712, {},
                       env.unit + ": `" + shell_words(build) + "` wrote no image ID to --iidfile",
                       "the job runs the image by its ID; nothing was submitted");
    return std::nullopt;
  }
  const std::string relative = squashfs_path(id);
  imported[action.image] = env_dir + "/" + relative;
  if (fs::is_regular_file(env_dir + "/" + relative, error)) return relative;
  std::string why;
  if (!make_applied_dir(env_dir, why)) {
    diagnostics.report(Code::E0730, {}, env.unit + ": " + why, "nothing was submitted");
    return std::nullopt;
  }
  // enroot refuses an existing output file; the import is renamed into place whole, so a
  // squashfs of that name is always a complete one.
  const std::string part = env_dir + "/" + relative + ".part";
  fs::remove(part, error);
  if (!run(request, env.unit, {*enroot, "import", "-o", part, scheme + id}, out, diagnostics))
    return std::nullopt;
  fs::rename(part, env_dir + "/" + relative, error);
  if (error) {
    diagnostics.report(Code::E0730, {},
                       env.unit + ": cannot rename " + part + ": " + error.message(),
                       "nothing was submitted");
    return std::nullopt;
  }
  return relative;
}

}  // namespace mlenv::plan
