#include "targets/kube/apply/step_runner.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "compiler/apply/image_builder.h"
#include "compiler/apply/records.h"
#include "compiler/base/sha256.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/cluster_json.h"

namespace mlenv::plan {
namespace {

// `n` bytes from the kernel's random source (getrandom(2), which blocks only until the pool is
// initialised at boot); throws when it cannot provide them.
std::string random_bytes(int n) {
  std::string out(static_cast<std::size_t>(n), '\0');
  std::size_t filled = 0;
  while (filled < out.size()) {
    ssize_t got = getrandom(out.data() + filled, out.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("no random bytes from the kernel");
    filled += static_cast<std::size_t>(got);
  }
  return out;
}

// `text` in lower case (ASCII): host names compare without case.
std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The whitespace-separated words of `text`.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.insert(word);
  return out;
}

}  // namespace

StepRunner::StepRunner(const ApplyRequest& request, std::string kubectl, std::string oc,
                       std::ostream& out, Diagnostics& diagnostics)
    : request_(request),
      kubectl_(std::move(kubectl)),
      oc_(std::move(oc)),
      image_builder_(find_image_builder()),
      out_(out),
      diagnostics_(diagnostics),
      timeout_(parse_duration(request.steps.timeout).value_or(1800)) {}

bool StepRunner::run(const Step& step, const std::string& unit) {
  unit_ = unit;
  switch (step.kind) {
    case StepKind::Run:
      return run_plain(step);
    case StepKind::RequireNamespace:
      return require_namespace(step);
    case StepKind::EnsureSecret:
      return ensure_secret(step);
    case StepKind::CheckGrant:
      return check_grant(step);
    case StepKind::CheckPodSecurity:
      return check_pod_security(step);
    case StepKind::Build:
      return build(step);
    case StepKind::Push:
      return push(step);
    case StepKind::WaitJob:
      return wait_job(step);
    case StepKind::WaitRollout:
      return wait_rollout(step);
    case StepKind::Notice:
      out_ << printable(step.subject) << '\n';
      return true;
  }
  return false;
}

std::vector<std::string> StepRunner::argv(Client client,
                                          const std::vector<std::string>& args) const {
  std::vector<std::string> out{client == Client::Oc             ? oc_
                               : client == Client::ImageBuilder ? image_builder_
                                                                : kubectl_};
  if (out[0].empty()) out[0] = "podman";  // no image builder: the command to run by hand
  // One argument, `--context=NAME`: the name cannot become another option or argument.
  if (client != Client::ImageBuilder && !request_.context.empty())
    out.push_back("--context=" + request_.context);
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

bool StepRunner::check_server(const std::string& api, const std::string& units) {
  Step step;
  step.args = current_server_args(kubectl_);
  show(argv(step.client, step.args));
  if (request_.dry_run) return true;
  unit_ = units;
  std::optional<RunResult> result = call(step, step.args, "", true);
  return result && is_cluster_server(result->output, api, units, "nothing was applied or deleted",
                                     diagnostics_);
}

std::vector<std::string> current_server_args(const std::string& client) {
  if (std::filesystem::path(client).filename() == "oc") return {"whoami", "--show-server"};
  return {"config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"};
}

bool is_cluster_server(std::string_view server, const std::string& api, const std::string& units,
                       const std::string& done, Diagnostics& diagnostics) {
  const std::string host = server_host(server);
  if (host == lower(api)) return true;
  Diagnostic& d = diagnostics.report(
      Code::E0719, {},
      "the client's current server is " + (host.empty() ? "none" : "`" + printable(host) + "`") +
          ", not `" + api + "`, the `api` of the cluster of " + units,
      "pick the cluster's context with --context NAME (`kubectl config get-contexts`), or log "
      "in to `" +
          api + "`");
  d.notes.push_back({done, {}});
  return false;
}

std::string server_host(std::string_view server) {
  while (!server.empty() && std::isspace(static_cast<unsigned char>(server.back())))
    server.remove_suffix(1);
  if (std::size_t scheme = server.find("://"); scheme != std::string_view::npos)
    server.remove_prefix(scheme + 3);
  server = server.substr(0, server.find_first_of("/?#"));
  if (std::size_t at = server.rfind('@'); at != std::string_view::npos)
    server.remove_prefix(at + 1);
  if (server.starts_with('[')) {  // an IPv6 literal: `[fd00::1]:6443`
    std::size_t end = server.find(']');
    return end == std::string_view::npos ? "" : lower(std::string(server.substr(1, end - 1)));
  }
  return lower(std::string(server.substr(0, server.find(':'))));
}

void StepRunner::show(const std::vector<std::string>& command, const std::string& suffix) {
  out_ << "$ " << printable(shell_words(command)) << printable(suffix) << '\n';
  out_.flush();
}

std::optional<RunResult> StepRunner::call(const Step& step, const std::vector<std::string>& args,
                                          const std::string& input, bool capture,
                                          bool quiet_failure, int timeout) {
  RunResult result =
      run_command(argv(step.client, args), input, timeout > 0 ? timeout : timeout_, capture);
  if (!result.timed_out && (result.status == 0 || quiet_failure)) return result;
  report_failure(step, args, result);
  return std::nullopt;
}

void StepRunner::report_failure(const Step& step, const std::vector<std::string>& args,
                                const RunResult& result) {
  Diagnostic& d = diagnostics_.report(
      result.timed_out ? Code::E0707 : Code::E0706, {},
      "`" + shell_words(args) + "` " +
          (result.timed_out ? "did not finish within " + request_.steps.timeout
                            : "exited with status " + std::to_string(result.status)));
  const std::string ref = std::string(applied_refs(request_.steps.admin)) + unit_;
  const bool waited = step.kind == StepKind::WaitRollout || step.kind == StepKind::WaitJob;
  d.notes.push_back({waited ? "`" + ref + "` records the env as applied: not ready yet"
                            : "nothing was pruned and `" + ref + "` was not moved",
                     {}});
}

bool StepRunner::run_plain(const Step& step) {
  if (!step.unless_gone.empty()) {
    show(argv(step.client, step.unless_gone),
         request_.dry_run ? " (applied below only when found)" : "");
    if (!request_.dry_run) {
      std::optional<RunResult> found = call(step, step.unless_gone, "", true);
      if (!found) return false;
      if (found->output.empty()) {
        out_ << step.unless_gone[2] << ": gone (it finished and its ttl removed it); the change "
             << "is not applied, which would start it again\n";
        return true;
      }
    }
  }
  std::string input = step.input;
  std::string suffix;
  if (!step.input.empty())
    suffix = " < " + (step.input_from.empty() ? "(ApplySet parent)" : step.input_from);
  if (!step.image.empty()) {
    auto digest = digests_.find(step.image);
    if (digest != digests_.end()) {
      // Onward from each replacement: a digest that contains the image cannot loop forever.
      const std::string from = image_field(step.image);
      const std::string to = image_field(digest->second);
      for (std::size_t at = 0; (at = input.find(from, at)) != std::string::npos; at += to.size())
        input.replace(at, from.size(), to);
      suffix += " (image " + digest->second + ")";
    } else if (request_.dry_run) {
      suffix += " (image " + step.image + " by its built digest)";
    }
  }
  show(argv(step.client, step.args), suffix);
  return request_.dry_run || call(step, step.args, input, false).has_value();
}

bool StepRunner::require_namespace(const Step& step) {
  show(argv(step.client, step.args));
  if (request_.dry_run) return true;
  std::optional<RunResult> result = call(step, step.args, "", true);
  if (!result) return false;
  if (!result->output.empty()) return true;
  diagnostics_.report(Code::E0710, {}, "namespace `" + step.subject + "` does not exist",
                      "ask the platform team to create it; apply never creates a Namespace");
  return false;
}

bool StepRunner::ensure_secret(const Step& step) {
  show(argv(step.client, step.args));
  const std::string create_suffix = " < <random " + std::to_string(step.random_bytes) +
                                    (step.random_hex ? " bytes as hex>" : " bytes>");
  if (request_.dry_run) {
    show(argv(step.client, step.then), create_suffix + " (when missing)");
    return true;
  }
  std::optional<RunResult> found = call(step, step.args, "", true);
  if (!found) return false;
  if (!found->output.empty()) return true;
  show(argv(step.client, step.then), create_suffix);
  std::string secret = random_bytes(step.random_bytes);
  return call(step, step.then, step.random_hex ? hex_text(secret) : secret, false).has_value();
}

bool StepRunner::check_grant(const Step& step) {
  show(argv(step.client, step.args));
  if (request_.dry_run) return true;
  std::optional<RunResult> result = call(step, step.args, "", true, true);
  if (!result) return false;
  std::set<std::string> answer = words(result->output);
  if (result->status == 0 && answer.count("yes") != 0) return true;
  if (answer.count("no") == 0) {
    call(step, step.args, "", true);  // not an answer: report the failure as any other
    return false;
  }
  const std::string as = step.args[4].substr(5);
  Diagnostic& d =
      diagnostics_.report(Code::E0711, {}, "`" + as + "` may not use " + step.subject,
                          "the platform team grants it once with `mlenvc apply --admin`");
  if (!step.note.empty()) d.notes.push_back({step.note, {}});
  return false;
}

bool StepRunner::check_pod_security(const Step& step) {
  show(argv(step.client, step.args));
  if (request_.dry_run) return true;
  std::optional<RunResult> result = call(step, step.args, "", true);
  if (!result) return false;
  std::set<std::string> level = words(result->output);
  const std::string namespace_ = step.args[2];
  for (const char* refusing : {"baseline", "restricted"}) {
    if (level.count(refusing) == 0) continue;
    Diagnostic& d = diagnostics_.report(
        Code::E0713, {},
        "the pods of `" + unit_ + "/" + step.subject + "` need Pod Security level `privileged`, " +
            "and namespace `" + namespace_ + "` enforces `" + refusing + "`",
        "the platform team labels it: kubectl label namespace " + namespace_ +
            " pod-security.kubernetes.io/enforce=privileged");
    d.notes.push_back({printable(step.note) + ", which `" + refusing + "` refuses", {}});
    d.notes.push_back({"apply sent nothing", {}});
    return false;
  }
  return true;
}

bool StepRunner::build(const Step& step) {
  // The envs that run one image share it: built, or its digest read, once per apply.
  if (!images_done_.insert(step.image).second) return true;
  if (request_.dry_run) {
    if (step.rebuild) show(argv(step.client, step.then));
    if (!step.args.empty())
      show(argv(step.client, step.args), step.rebuild ? "" : " (built first when missing)");
    return true;
  }
  if (!step.rebuild && !step.args.empty()) {
    show(argv(step.client, step.args));
    std::optional<RunResult> current = call(step, step.args, "", true, true);
    if (!current) return false;
    if (current->status == 0 && is_digest_reference(current->output)) {
      digests_[step.image] = current->output;
      return true;
    }
  }
  if (!step.then.empty()) {
    std::vector<std::string> then = step.then;
    std::optional<BuildContext> context;
    if (!upload_only_context(step, then, context)) return false;
    show(argv(step.client, then));
    if (!call(step, then, "", false)) {
      show(argv(step.client, step.on_failure));
      RunResult log = run_command(argv(step.client, step.on_failure), "", timeout_, true);
      std::string tail = printable(log.output, true);
      out_ << tail << (tail.ends_with('\n') || tail.empty() ? "" : "\n");
      return false;
    }
  }
  if (step.args.empty()) return true;
  show(argv(step.client, step.args));
  std::optional<RunResult> built = call(step, step.args, "", true);
  if (!built) return false;
  if (!is_digest_reference(built->output)) {
    diagnostics_.report(Code::E0712, {}, "`" + shell_words(step.args) + "` printed no image digest",
                        "the build of `" + step.subject + "` pushed no image");
    return false;
  }
  digests_[step.image] = built->output;
  return true;
}

bool StepRunner::upload_only_context(const Step& step, std::vector<std::string>& then,
                                     std::optional<BuildContext>& context) {
  static constexpr std::string_view kFromDir = "--from-dir=";
  if (step.dockerfile.empty()) return true;
  for (std::string& arg : then) {
    if (!arg.starts_with(kFromDir)) continue;
    context.emplace(arg.substr(kFromDir.size()), build_context_paths(step.dockerfile));
    if (!context->error().empty()) {
      diagnostics_.report(Code::E0706, {}, "`" + step.subject + "`: " + context->error(),
                          "nothing was uploaded or built");
      return false;
    }
    arg = std::string(kFromDir) + context->path();
  }
  return true;
}

bool StepRunner::push(const Step& step) {
  if (!images_done_.insert(step.image).second) return true;  // pushed for an env before this one
  if (!step.rebuild) {
    digests_[step.image] = step.digest;
    if (request_.dry_run)
      out_ << "Image " << printable(step.image) << " unchanged: " << printable(step.digest) << '\n';
    return true;
  }
  const std::vector<std::string> push_args =
      image_push_args(image_builder_, step.image, "<digest file>");
  if (image_builder_.empty() || request_.dry_run) {
    // Nothing here can build images: the exact commands, for someone who can.
    const char* why = image_builder_.empty()
                          ? " (no podman, buildah or docker on PATH: run it where one is)"
                          : "";
    show(argv(step.client, step.then), why);
    show(argv(step.client, push_args), why);
    return true;
  }
  show(argv(step.client, step.then));
  if (!call(step, step.then, "", false)) return false;
  DigestFile digest_file;
  const std::vector<std::string> args =
      image_push_args(image_builder_, step.image, digest_file.path());
  show(argv(step.client, args));
  std::optional<RunResult> pushed = call(step, args, "", true);
  if (!pushed) return false;
  out_ << printable(pushed->output, true);
  std::string digest = pushed_digest(digest_file.text(), pushed->output);
  if (digest.empty()) {
    diagnostics_.report(Code::E0712, {}, "`" + shell_words(args) + "` printed no image digest",
                        "the workloads run `" + step.subject + "` by the digest its push reports");
    return false;
  }
  digests_[step.image] = digest_reference(step.image, digest);
  return true;
}

std::string StepRunner::digest(const std::string& image) const {
  auto it = digests_.find(image);
  return it == digests_.end() ? "" : it->second;
}

std::string StepRunner::admission_refusal(const Step& step, const std::string& kind,
                                          const std::string& name, const std::string& namespace_) {
  // The Job and StatefulSet controllers report pods that admission refused as FailedCreate
  // events on their workload (kubernetes pkg/controller/job/job_controller.go through
  // controller_utils' `Error creating: ...`; pkg/controller/statefulset/stateful_pod_control.go,
  // `create Pod <pod> in StatefulSet <set> failed error: ...`); the child Jobs of a run that
  // makes Jobs are `<run>-...`. Pod Security's message says
  // `violates PodSecurity "<level>:<version>"` (k8s.io/pod-security-admission); the workload
  // never gets a pod, so it never ends or becomes ready.
  std::optional<RunResult> events =
      call(step,
           {"get", "events", "-n", namespace_, "--field-selector",
            "reason=FailedCreate,involvedObject.kind=" + kind, "-o",
            "jsonpath={range .items[*]}{.involvedObject.name}{\"\\t\"}{.message}{\"\\n\"}{end}"},
           "", true, true);
  if (!events || events->status != 0) return "";
  std::istringstream lines(events->output);
  for (std::string line; std::getline(lines, line);) {
    std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string object = line.substr(0, tab);
    if (object != name && (kind != "Job" || !object.starts_with(name + "-"))) continue;
    if (line.find("violates PodSecurity", tab) != std::string::npos) return line.substr(tab + 1);
  }
  return "";
}

void StepRunner::report_refusal(const Step& step, const std::string& namespace_,
                                const std::string& refused) {
  out_ << step.subject << ": pods refused\n";
  diagnostics_.report(Code::E0713, {},
                      std::string(step.kind == StepKind::WaitJob ? "run `" : "`") + unit_ + "/" +
                          step.subject +
                          "` cannot start: its pods are refused: " + printable(refused),
                      "the namespace's Pod Security level must admit them: kubectl label "
                      "namespace " +
                          namespace_ + " pod-security.kubernetes.io/enforce=privileged");
}

std::string StepRunner::queued_in(const Step& step) {
  if (step.queued.empty()) return "";
  std::optional<RunResult> result = call(step, step.queued, "", true, true);
  return result && result->status == 0 ? day2::parse_queued(result->output) : "";
}

bool StepRunner::wait_job(const Step& step) {
  show(argv(step.client, step.args), " (until Complete or Failed)");
  if (request_.dry_run) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline -
                                                                 std::chrono::steady_clock::now())
                    .count();
    std::optional<RunResult> result =
        call(step, step.args, "", true, false, static_cast<int>(std::max<long long>(left, 1)));
    if (!result) return false;
    std::set<std::string> conditions = words(result->output);
    if (conditions.count("Complete") != 0 || conditions.count("Completed") != 0) {
      out_ << step.subject << ": Complete\n";
      return true;
    }
    if (conditions.count("Failed") != 0) {
      out_ << step.subject << ": Failed\n";
      diagnostics_.report(
          Code::E0713, {}, "run `" + unit_ + "/" + step.subject + "` failed",
          "read its logs: `kubectl logs -n " + step.args[4] + " -l " + step.pods + " --prefix`");
      run_failed_ = true;
      return true;
    }
    if (std::string refused = admission_refusal(step, "Job", step.args[2], step.args[4]);
        !refused.empty()) {
      report_refusal(step, step.args[4], refused);
      run_failed_ = true;
      return true;
    }
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(request_.poll_ms) >=
        deadline) {
      Diagnostic& d = diagnostics_.report(
          Code::E0707, {},
          "`" + step.subject + "` did not finish within " + request_.steps.timeout);
      if (std::string queued = queued_in(step); !queued.empty()) {
        out_ << step.subject << ": " << queued << '\n';
        d.notes.push_back({queued, {}});
      }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(request_.poll_ms));
  }
}

bool StepRunner::wait_rollout(const Step& step) {
  show(argv(step.client, step.args));
  if (request_.dry_run) return true;
  // `rollout status` watches until the pods are ready and knows nothing of pods that admission
  // refused, so it runs in rounds of `poll_ms` (at least a second), ended by the runner; between
  // rounds the workload's FailedCreate events are read. Its own output is kept until the end,
  // so the rounds do not repeat it.
  const std::size_t slash = step.subject.find('/');
  const std::string kind = step.subject.substr(0, slash);  // `StatefulSet/<name>`
  const std::string name = step.subject.substr(slash + 1);
  const std::string& namespace_ = step.args[4];
  const int round = std::max(1, request_.poll_ms / 1000);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    RunResult result = run_command(argv(step.client, step.args), "",
                                   static_cast<int>(std::clamp<long long>(left, 1, round)), true);
    if (!result.timed_out || left <= round) {
      out_ << printable(result.output, true);
      if (!result.timed_out && result.status == 0) return true;
      report_failure(step, step.args, result);
      return false;
    }
    if (std::string refused = admission_refusal(step, kind, name, namespace_); !refused.empty()) {
      report_refusal(step, namespace_, refused);
      return false;
    }
  }
}

}  // namespace mlenv::plan
