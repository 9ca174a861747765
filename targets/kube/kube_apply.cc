#include "targets/kube/kube_apply.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "compiler/apply/image_builder.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"
#include "targets/kube/apply/step_runner.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

// What one apply does: the envs it applies, then the envs it takes off the cluster because
// the plan no longer holds them; `steps` in that order.
struct ApplyWork {
  std::vector<EnvPlan> envs;
  std::vector<EnvPlan> removed;
  std::vector<EnvSteps> steps;
};

// The envs that run one image share its build (the runner builds or pushes it once, for the
// first of them): it is built again when no env that runs it was applied before, or the inputs
// of one that was changed; otherwise the image is what was built or pushed before (a Push
// step's recorded digest). An env that joins an image already built builds nothing.
void share_images(const std::vector<EnvPlan>& envs, std::vector<EnvSteps>& steps) {
  struct Image {
    bool applied = false;  // some env that runs it was applied before
    bool changed = false;  // the build inputs of such an env changed
    std::string digest;    // the digest such an env's record names (Push)
  };
  auto is_image_step = [](const Step& step) {
    return step.kind == StepKind::Build || step.kind == StepKind::Push;
  };
  std::map<std::string, Image> images;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!envs[i].applied) continue;
    for (const Step& step : steps[i].steps) {
      if (!is_image_step(step)) continue;
      Image& image = images[step.image];
      image.applied = true;
      image.changed = image.changed || image_inputs_changed(envs[i]);
      if (!step.digest.empty()) image.digest = step.digest;
    }
  }
  for (EnvSteps& env : steps) {
    for (Step& step : env.steps) {
      if (!is_image_step(step)) continue;
      const Image& image = images[step.image];
      step.rebuild = !image.applied || image.changed;
      if (step.kind == StepKind::Push) {
        step.digest = image.digest;
        step.rebuild = step.rebuild || step.digest.empty();
      }
    }
  }
}

// Every env's steps, or false with E0704/E0705/E0607 reported. A removed env keeps the shared
// objects that an env being applied, or another env of its cluster at HEAD, still holds.
bool all_steps(Repository& repo, const std::optional<ObjectId>& head_tree,
               const StepOptions& requested, ApplyWork& work, Diagnostics& diagnostics) {
  StepOptions options = requested;
  for (const EnvPlan& env : work.envs) {
    for (const PlanObject& object : env.manifest.objects) {
      if (object.shared) options.shared_in_use.insert(shared_key(object));
    }
  }
  std::set<std::string> destroyed;
  for (const EnvPlan& env : work.envs) {
    if (std::optional<EnvSteps> steps = plan_steps(env, options, destroyed, diagnostics))
      work.steps.push_back(std::move(*steps));
  }
  if (work.steps.size() == work.envs.size()) share_images(work.envs, work.steps);
  for (const EnvPlan& env : work.removed) {
    StepOptions kept = options;
    kept.shared_in_use.merge(shared_kept_at_head(repo, head_tree, env));
    if (std::optional<EnvSteps> steps = destroy_steps(env, kept, destroyed, diagnostics))
      work.steps.push_back(std::move(*steps));
  }
  for (const std::string& address : requested.allow_destroy) {
    if (destroyed.count(address) == 0) {
      diagnostics.report(Code::E0705, {},
                         "--allow-destroy=" + address + " matches no object this apply deletes",
                         "addresses are spelled as in the plan: <cluster>/<env>/<Kind>/<name>");
    }
  }
  return !diagnostics.has_errors();
}

// The kubectl-compatible client and oc; E0703 when a needed one is missing.
// plan.json's `platform` picks the client: `oc` first for OpenShift plans, `kubectl` first
// when every plan is another platform's.
std::optional<std::pair<std::string, std::string>> find_clients(const ApplyRequest& request,
                                                                const std::vector<EnvPlan>& envs,
                                                                const std::vector<EnvSteps>& steps,
                                                                Diagnostics& diagnostics) {
  const bool openshift = std::any_of(envs.begin(), envs.end(), [](const EnvPlan& env) {
    return env.manifest.platform == ir::Platform::openshift;
  });
  std::string kubectl = request.client;
  if (kubectl.empty())
    kubectl = platform_client(openshift ? ir::Platform::openshift : ir::Platform::kubernetes);
  std::string oc = fs::path(kubectl).filename() == "oc" ? kubectl : find_on_path("oc").value_or("");
  bool needs_oc = false;
  for (const EnvSteps& env : steps) {
    for (const Step& step : env.steps) needs_oc = needs_oc || step.client == Client::Oc;
  }
  if (!request.dry_run && (kubectl.empty() || (needs_oc && oc.empty()))) {
    diagnostics.report(Code::E0703, {},
                       kubectl.empty() ? "neither `oc` nor `kubectl` is on PATH"
                                       : "a build must start, and `oc` is not on PATH",
                       "install the client, or pass --kubectl PATH");
    return std::nullopt;
  }
  if (kubectl.empty()) kubectl = "kubectl";
  if (oc.empty()) oc = "oc";
  return std::pair{kubectl, oc};
}

// The record's trailers: `Shared-Manager:`, the field manager of the cluster's shared objects
// it applied them as, and `Image-Digest:`, the digest the env's workloads ran by, where apply
// pushed its image (a cluster's own build is asked for its digest at every apply).
std::string record_trailers(const EnvPlan& env, const StepRunner& runner) {
  std::string out = std::string(kSharedManagerTrailer) + shared_field_manager(env.unit) + "\n";
  for (const PlanAction& action : env.manifest.actions) {
    if (action.action != "push") continue;
    std::string digest = runner.digest(action.image);
    if (!digest.empty()) return out + std::string(kImageTrailer) + digest + "\n";
  }
  return out;
}

// The `api` of the env's cluster in its plan.json (the one applied, for an env that leaves);
// "" in plans written before plan.json held it.
std::string api_of(const EnvPlan& env, bool leaves) {
  const std::optional<std::string> text =
      (leaves ? env.applied_files : env.files).read(env.dir + "/plan.json");
  return text ? plan_json_string(*text, "api") : "";
}

// The envs apply touches by their cluster's `api` (none for plans without it).
std::map<std::string, std::string> units_by_api(const std::vector<const EnvPlan*>& envs,
                                                const std::vector<const EnvPlan*>& leaving) {
  std::map<std::string, std::string> out;
  auto add = [&out](const EnvPlan& env, bool leaves) {
    const std::string api = api_of(env, leaves);
    if (api.empty()) return;
    std::string& units = out[api];
    units += (units.empty() ? "`" : ", `") + env.unit + "`";
  };
  for (const EnvPlan* env : envs) add(*env, false);
  for (const EnvPlan* env : leaving) add(*env, true);
  return out;
}

// The client's current server is the cluster of every env apply touches (E0719 otherwise):
// a plan reviewed for one cluster never reaches another one kubectl happens to point at.
bool check_servers(StepRunner& runner, const std::vector<const EnvPlan*>& envs,
                   const std::vector<const EnvPlan*>& leaving) {
  for (const auto& [api, units] : units_by_api(envs, leaving)) {
    if (!runner.check_server(api, units)) return false;
  }
  return true;
}

// Runs the waits of `env`, recorded as applied before them; false when one timed out or
// failed, which leaves the env applied but not ready: status, destroy and the next apply
// work from its record, and that apply resumes (an unchanged run is not applied again).
bool run_waits(StepRunner& runner, const EnvPlan& env, const std::vector<Step>& waits, bool dry_run,
               std::ostream& out) {
  for (const Step& wait : waits) {
    if (runner.run(wait, env.unit)) continue;
    if (!dry_run) {
      out << env.unit << " is applied, not ready: `" << wait.subject
          << "` did not become ready; `mlenvc status " << env.manifest.env
          << "` shows where it stands\n";
    }
    return false;
  }
  return true;
}

// Runs every env's preflight, then its steps, recording each env applied or destroyed, then
// its waits; the exit status.
int run_work(Repository& repo, const ApplyRequest& request, const ApplyWork& work,
             StepRunner& runner, const Head& head, std::ostream& out, Diagnostics& diagnostics) {
  std::vector<const EnvPlan*> applying;
  for (const EnvPlan& env : work.envs) applying.push_back(&env);
  std::vector<const EnvPlan*> leaving;
  for (const EnvPlan& env : work.removed) leaving.push_back(&env);
  if (!check_servers(runner, applying, leaving)) return 1;
  // Checks of every env first: a missing Namespace or grant stops apply before any change.
  bool ready = true;
  for (std::size_t i = 0; i < work.envs.size(); ++i) {
    for (const Step& step : work.steps[i].preflight)
      ready = runner.run(step, work.envs[i].unit) && ready;
  }
  if (!ready) return 1;
  const ObjectId head_tree = repo.commit_tree(*head.commit);
  for (std::size_t i = 0; i < work.steps.size(); ++i) {
    const bool removed = i >= work.envs.size();
    const EnvPlan& env = removed ? work.removed[i - work.envs.size()] : work.envs[i];
    const char* verb = removed ? (request.dry_run ? "Would destroy " : "Destroying ")
                               : (request.dry_run ? "Would apply " : "Applying ");
    out << verb << (request.steps.admin ? "the admin objects of " : "") << env.unit
        << (removed ? ", which left the plan in " : " from ") << env.dir << '\n';
    for (const Step& step : work.steps[i].steps) {
      if (!runner.run(step, env.unit)) return 1;
    }
    const bool recorded =
        request.dry_run ||
        (removed ? record_destroyed(repo, env, request.steps.admin,
                                    "The env left the plan at " + to_hex(*head.commit) + ".",
                                    diagnostics)
                 : record_applied(repo, env, request.steps.admin, *head.commit, head_tree,
                                  diagnostics, record_trailers(env, runner)));
    if (!recorded) return 1;
    if (!run_waits(runner, env, work.steps[i].waits, request.dry_run, out)) return 1;
  }
  return runner.run_failed() ? kExitRunFailed : 0;
}

// The client to run, the platform's as apply chooses it; E0703 when there is none.
std::optional<std::string> client_of(const DestroyRequest& request, const EnvPlan& env,
                                     Diagnostics& diagnostics) {
  std::string kubectl = request.client;
  if (kubectl.empty()) kubectl = platform_client(env.manifest.platform);
  if (!kubectl.empty() || request.dry_run) return kubectl.empty() ? "kubectl" : kubectl;
  diagnostics.report(Code::E0703, {}, "neither `oc` nor `kubectl` is on PATH",
                     "install the client, or pass --kubectl PATH");
  return std::nullopt;
}

// The steps that destroy `env`, or nullopt with E0704/E0705 reported.
std::optional<EnvSteps> steps_for(Repository& repo, const EnvPlan& env,
                                  const DestroyRequest& request, Diagnostics& diagnostics) {
  Head head = repo.head();
  std::optional<ObjectId> head_tree;
  if (head.commit) head_tree = repo.commit_tree(*head.commit);
  StepOptions options = request.steps;
  options.shared_in_use = shared_kept_at_head(repo, head_tree, env);
  std::set<std::string> destroyed;
  std::optional<EnvSteps> steps = destroy_steps(env, options, destroyed, diagnostics);
  for (const std::string& address : request.steps.allow_destroy) {
    if (destroyed.count(address) == 0)
      diagnostics.report(Code::E0705, {},
                         "--allow-destroy=" + address + " matches no object this destroy deletes",
                         "addresses are spelled as in the plan: <cluster>/<env>/<Kind>/<name>");
  }
  if (diagnostics.has_errors()) return std::nullopt;
  return steps;
}

// Runs (or prints) the steps, then records the env as destroyed; the exit status.
int run_destroy(Repository& repo, const EnvPlan& env, const EnvSteps& steps,
                const DestroyRequest& request, const std::string& client, std::ostream& out,
                Diagnostics& diagnostics) {
  ApplyRequest as_apply;
  as_apply.dry_run = request.dry_run;
  as_apply.steps = request.steps;
  as_apply.context = request.context;
  StepRunner runner(as_apply, client, client, out, diagnostics);
  if (!check_servers(runner, {}, {&env})) return 1;
  out << (request.dry_run ? "Would destroy " : "Destroying ") << env.unit << '\n';
  for (const Step& step : steps.steps) {
    if (!runner.run(step, env.unit)) return 1;
  }
  if (request.dry_run) {
    out << "Dry run: nothing was run.\n";
    return 0;
  }
  return record_destroyed(repo, env, request.steps.admin, "Destroyed on purpose.", diagnostics) ? 0
                                                                                                : 1;
}

}  // namespace

int KubeApplyDriver::apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
                           const std::vector<EnvPlan>& removed, std::ostream& out,
                           Diagnostics& diagnostics) const {
  ApplyWork work{envs, removed, {}};
  if (!all_steps(context.repo, context.head_tree, context.request.steps, work, diagnostics))
    return 1;
  auto clients = find_clients(context.request, work.envs, work.steps, diagnostics);
  if (!clients) return 1;
  StepRunner runner(context.request, clients->first, clients->second, out, diagnostics);
  return run_work(context.repo, context.request, work, runner, context.head, out, diagnostics);
}

int KubeApplyDriver::destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
                             std::ostream& out, Diagnostics& diagnostics) const {
  std::optional<EnvSteps> steps = steps_for(repo, env, request, diagnostics);
  std::optional<std::string> client = client_of(request, env, diagnostics);
  if (!steps || !client) return 1;
  return run_destroy(repo, env, *steps, request, *client, out, diagnostics);
}

std::string platform_client(ir::Platform platform) {
  // OpenShift's client first on OpenShift (builds, `rsync`, Routes); kubectl elsewhere.
  const bool openshift = platform == ir::Platform::openshift;
  std::optional<std::string> first = find_on_path(openshift ? "oc" : "kubectl");
  return first ? *first : find_on_path(openshift ? "kubectl" : "oc").value_or("");
}

}  // namespace mlenv::plan
