#include "targets/slurm/slurm_apply.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "compiler/apply/image_builder.h"
#include "compiler/apply/record_values.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "targets/slurm/sbatch.h"
#include "targets/slurm/slurm_image.h"
#include "targets/slurm/slurm_jobs.h"
#include "targets/slurm/slurm_pin.h"

namespace mlenv::plan {
namespace {

// A job apply --wait follows: the env's unit and its Slurm job id.
struct SubmittedJob {
  std::string unit;
  std::string id;
};

// --wait on Slurm, once every env is submitted: each job's state until every one has finished
// or --timeout has passed, one deadline for all; kExitRunFailed unless all completed.
int wait_for_jobs(const ApplyRequest& request, const std::vector<SubmittedJob>& jobs,
                  std::ostream& out, Diagnostics& diagnostics) {
  const int timeout = *parse_duration(request.steps.timeout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  std::vector<SubmittedJob> waiting = jobs;
  int status = 0;
  while (!waiting.empty() && std::chrono::steady_clock::now() < deadline) {
    std::erase_if(waiting, [&](const SubmittedJob& job) {
      std::optional<slurm::JobState> state = slurm::job_state(job.id, 30);
      if (!state || !state->finished) return false;
      out << job.unit << ": job " << job.id << " " << state->state
          << (state->reason.empty() ? "" : " (" + state->reason + ")") << '\n';
      out.flush();
      if (state->succeeded) return true;
      diagnostics.report(
          Code::E0713, {}, job.unit + ": Slurm job " + job.id + " ended " + state->state,
          "its output: " + slurm::log_files(job.unit.substr(job.unit.find('/') + 1), job.id)[0]);
      status = kExitRunFailed;
      return true;
    });
    if (!waiting.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(request.poll_ms));
  }
  for (const SubmittedJob& job : waiting) {
    diagnostics.report(Code::E0713, {},
                       job.unit + ": Slurm job " + job.id + " did not finish within --timeout",
                       "see it with squeue -j " + job.id);
    status = kExitRunFailed;
  }
  return status;
}

// The value of trailer `key` in the env's last apply, "" when it has none.
std::string recorded(const Repository& repo, const EnvPlan& env, std::string_view key) {
  return env.applied_commit ? slurm_trailer(repo.commit_message(*env.applied_commit), key) : "";
}

// The Slurm job of the env's last apply, "" when it has none.
std::string recorded_job(const Repository& repo, const EnvPlan& env) {
  return recorded(repo, env, kSlurmJobTrailer);
}

// The record's trailers: the job, and the image it runs: the squashfs apply imported, or the
// digest reference of the image apply pushed.
std::string job_trailers(const std::string& id, const std::string& image,
                         const std::string& digest) {
  std::string out = std::string(kSlurmJobTrailer) + id + "\n";
  if (!image.empty() && digest.empty()) out += std::string(kSlurmImageTrailer) + image + "\n";
  if (!digest.empty()) out += std::string(kImageTrailer) + digest + "\n";
  return out;
}

// The files of the env's job (every file of its directory but plan.json, whose input digests
// change with any edit of the source, a comment too) are those its record applied: the same
// script, boot.json and Dockerfile, and for an image apply builds the same `_runtime/`, so the
// recorded job is still this env's run.
bool job_files_unchanged(const EnvPlan& env, const PlanAction& action, const PlanAction* push) {
  if (!env.applied_commit) return false;
  if ((!action.image.empty() || push) && image_inputs_changed(env)) return false;
  const std::string plan_json = env.dir + "/plan.json";
  auto job_files = [&plan_json](const PlanTree& tree) {
    std::map<std::string, BlobId> files;
    for (const auto& [path, entry] : tree.entries()) {
      if (path != plan_json) files[path] = entry.id;
    }
    return files;
  };
  return job_files(env.files) == job_files(env.applied_files);
}

// Cancels job `id` of `unit` while it is pending or running (scancel(1) ends a job in either
// state); a job that has ended, or that neither squeue nor sacct knows any more, is left alone.
// False with E0706 when scancel fails.
bool cancel_active_job(const ApplyRequest& request, const std::string& unit, const std::string& id,
                       std::ostream& out, Diagnostics& diagnostics) {
  const int timeout = *parse_duration(request.steps.timeout);
  std::optional<slurm::JobState> state = slurm::job_state(id, timeout);
  if (!state || state->finished) {
    out << "Slurm job " << id << " of " << unit << " already ended"
        << (state ? " " + state->state : std::string()) << '\n';
    return true;
  }
  out << "$ " << shell_words(slurm::cancel_command(id)) << '\n';
  if (slurm::cancel(id, timeout)) return true;
  diagnostics.report(Code::E0706, {},
                     unit + ": `" + shell_words(slurm::cancel_command(id)) + "` failed",
                     "its own message is above; the env's record still names the job");
  return false;
}

// A changed env replaces its run, as a Job does on Kubernetes: the recorded job is cancelled
// before the new one is submitted, so two runs of one env never hold nodes at once.
bool cancel_replaced_job(const ApplyRequest& request, const EnvPlan& env, const std::string& id,
                         std::ostream& out, Diagnostics& diagnostics) {
  out << (request.dry_run ? "Would replace " : "Replacing ") << env.unit
      << " (run spec changed): " << (request.dry_run ? "would cancel" : "cancelling")
      << " Slurm job " << id << " while it is pending or running\n";
  return request.dry_run || cancel_active_job(request, env.unit, id, out, diagnostics);
}

// The images of this apply's envs, each built once: imported for pyxis, or pushed.
struct AppliedImages {
  ImportedImages imported;
  PushedImages pushed;
};

// Submits one env's `submit` action; false when apply must stop (diagnostics reported). An env
// whose job files are those last applied keeps its job ("unchanged"), as a Job whose spec is
// unchanged is not applied again; a changed env's recorded job is cancelled first. The env's
// job, submitted or kept, is added to `jobs` for --wait. `push`: the env's image is pushed
// to its registry first (once for the envs of the image, `images.pushed`) and the job runs it
// by the pushed digest.
bool submit_env(const ApplyRequest& request, Repository& repo, const Head& head,
                const ObjectId& head_tree, const std::string& workdir, const EnvPlan& env,
                const PlanAction& action, const PlanAction* push, AppliedImages& images,
                std::vector<SubmittedJob>& jobs, std::ostream& out, Diagnostics& diagnostics) {
  const std::string previous = recorded_job(repo, env);
  const std::string previous_image = recorded(repo, env, kSlurmImageTrailer);
  if (!previous.empty() && job_files_unchanged(env, action, push)) {
    out << env.unit << ": unchanged, Slurm job " << previous << '\n';
    if (request.dry_run) return true;
    // A new plan.json (input digests) is recorded, still naming the job.
    if (repo.subtree(head_tree, env.dir) != repo.commit_tree(*env.applied_commit) &&
        !record_applied(repo, env, false, *head.commit, head_tree, diagnostics,
                        job_trailers(previous, previous_image, push ? env.applied_image : "")))
      return false;
    jobs.push_back({env.unit, previous});
    return true;
  }
  const std::string dir = workdir + "/" + env.dir;
  // The image before the old job is cancelled: it runs on while the new image is built and
  // imported, and a job is never submitted before its image is there.
  std::string image;
  std::string digest;
  if (push) {
    std::optional<std::string> pushed =
        pushed_slurm_image(request, env, *push, images.pushed, out, diagnostics);
    if (!pushed) return false;
    digest = *pushed;
    image = target::slurm::enroot_uri(digest);
  } else if (!action.image.empty()) {
    std::optional<std::string> imported =
        slurm_image(request, env, previous_image, dir, action, images.imported, out, diagnostics);
    if (!imported) return false;
    image = *imported;
  }
  if (!previous.empty() && !cancel_replaced_job(request, env, previous, out, diagnostics))
    return false;
  const PlanEntry* config = env.files.find(env.dir + "/" + std::string(kSlurmBootConfig));
  const std::string pinned = config ? pinned_config_path(config->id) : "";
  out << (request.dry_run ? "Would submit " : "Submitting ") << env.unit << ": "
      << shell_words(slurm::submit_command("sbatch", dir, action.script, pinned, image)) << '\n';
  if (request.dry_run) return true;
  std::string error;
  if (!pin_boot_config(env, dir, error)) {
    diagnostics.report(Code::E0730, {}, env.unit + ": " + error,
                       "the job would read boot.json when it starts; nothing was submitted");
    return false;
  }
  std::optional<std::string> id = slurm::submit(dir, action.script, pinned, image,
                                                *parse_duration(request.steps.timeout), error);
  if (!id) {
    diagnostics.report(Code::E0730, {}, env.unit + ": " + error,
                       "sbatch's message above says why; nothing was recorded");
    return false;
  }
  out << "Submitted " << env.unit << " as Slurm job " << *id << '\n';
  out.flush();
  if (!record_applied(repo, env, false, *head.commit, head_tree, diagnostics,
                      job_trailers(*id, image, digest)))
    return false;
  jobs.push_back({env.unit, *id});
  return true;
}

// The squashfs of each image that an env applied before imported from the inputs it has now,
// and the digest of each one it pushed: an env that joins the image, or runs it anew, links or
// runs it instead of building it again.
AppliedImages recorded_images(const Repository& repo, const std::string& workdir,
                              const std::vector<EnvPlan>& envs) {
  AppliedImages out;
  for (const EnvPlan& env : envs) {
    if (image_inputs_changed(env)) continue;
    for (const PlanAction& action : env.manifest.actions) {
      if (action.action == "push" && is_digest_reference(env.applied_image) &&
          image_repository(env.applied_image) == image_repository(action.image))
        out.pushed.emplace(action.image, env.applied_image);
    }
    const std::string squashfs = recorded(repo, env, kSlurmImageTrailer);
    if (squashfs.empty() || !is_squashfs_path(squashfs)) continue;
    const std::string path = workdir + "/" + env.dir + "/" + squashfs;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) continue;
    for (const PlanAction& action : env.manifest.actions) {
      if (action.action == "submit" && !action.image.empty())
        out.imported.emplace(action.image, path);
    }
  }
  return out;
}

}  // namespace

std::string slurm_trailer(const std::string& message, std::string_view key) {
  const std::string value = raw_trailer(message, key);
  const bool valid = (key == kSlurmJobTrailer && is_slurm_job_id(value)) ||
                     (key == kSlurmImageTrailer && is_squashfs_path(value));
  return valid ? value : std::string();
}

int SlurmApplyDriver::apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
                            const std::vector<EnvPlan>& removed, std::ostream& out,
                            Diagnostics& diagnostics) const {
  if (!cancel_removed_slurm_envs(context.request, context.repo, removed, *context.head.commit, out,
                                 diagnostics))
    return 1;
  return apply_slurm_envs(context.request, context.repo, context.head, *context.head_tree,
                          context.workdir, envs, out, diagnostics);
}

int SlurmApplyDriver::destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
                              std::ostream& out, Diagnostics& diagnostics) const {
  for (const std::string& address : request.steps.allow_destroy) {
    diagnostics.report(Code::E0705, {},
                       "--allow-destroy=" + address + " matches no object this destroy deletes",
                       "a Slurm env has no objects: destroy cancels its job and keeps its files");
  }
  if (!request.steps.allow_destroy.empty()) return 1;
  ApplyRequest as_apply;
  as_apply.dry_run = request.dry_run;
  as_apply.steps = request.steps;
  return cancel_slurm_env(as_apply, repo, env, "Destroyed on purpose.", out, diagnostics) ? 0 : 1;
}

int apply_slurm_envs(const ApplyRequest& request, Repository& repo, const Head& head,
                     const ObjectId& head_tree, const std::string& workdir,
                     const std::vector<EnvPlan>& envs, std::ostream& out,
                     Diagnostics& diagnostics) {
  if (request.steps.admin) return 0;  // a Slurm env has nothing for the platform team
  // Every env is submitted first, then --wait follows all its jobs: one long job holds no
  // other env back in the queue.
  std::vector<SubmittedJob> jobs;
  AppliedImages images = recorded_images(repo, workdir, envs);
  for (const EnvPlan& env : envs) {
    const PlanAction* push = nullptr;
    for (const PlanAction& action : env.manifest.actions) {
      if (action.action == "push") push = &action;
      if (action.action != "submit") continue;
      if (!submit_env(request, repo, head, head_tree, workdir, env, action, push, images, jobs, out,
                      diagnostics))
        return 1;
    }
  }
  return request.steps.wait ? wait_for_jobs(request, jobs, out, diagnostics) : 0;
}

bool cancel_slurm_env(const ApplyRequest& request, Repository& repo, const EnvPlan& env,
                      const std::string& why, std::ostream& out, Diagnostics& diagnostics) {
  const std::string id = recorded_job(repo, env);
  out << (request.dry_run ? "Would destroy " : "Destroying ") << env.unit << '\n';
  // A Slurm env holds no claims: its data is files, which no destroy deletes.
  out << "Keeping " << env.dir << "/ (logs/, workspace/) and the cluster's workspace_dir and "
      << "datasets_dir: a Slurm env's data is files, which destroy never deletes\n";
  if (request.dry_run) {
    if (!id.empty()) out << "$ " << shell_words(slurm::cancel_command(id)) << '\n';
    return true;
  }
  // A failed scancel leaves the record as it is, so the next try cancels again.
  if (!id.empty() && !cancel_active_job(request, env.unit, id, out, diagnostics)) return false;
  return record_destroyed(repo, env, false, why, diagnostics);
}

bool cancel_removed_slurm_envs(const ApplyRequest& request, Repository& repo,
                               const std::vector<EnvPlan>& removed, const ObjectId& head,
                               std::ostream& out, Diagnostics& diagnostics) {
  if (request.steps.admin) return true;
  for (const EnvPlan& env : removed) {
    if (!cancel_slurm_env(request, repo, env, "The env left the plan at " + to_hex(head) + ".", out,
                          diagnostics))
      return false;
  }
  return true;
}

}  // namespace mlenv::plan
