#include "compiler/plan/day2/session.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "compiler/diag/render.h"
#include "compiler/plan/apply/runner.h"

namespace mlenv::plan::day2 {

std::optional<Session> Session::of(AppliedEnv env, const Target& target, Diagnostics& diagnostics) {
  Session session;
  session.program_ = target.client;
  if (session.program_.empty()) session.program_ = platform_client(env.plan.platform);
  if (session.program_.empty()) {
    diagnostics.report(Code::E0703, {}, "neither `oc` nor `kubectl` is on PATH",
                       "install the client, or pass --kubectl PATH");
    return std::nullopt;
  }
  session.is_oc_ = std::filesystem::path(session.program_).filename() == "oc";
  session.env_ = std::move(env);
  session.timeout_seconds_ = target.timeout_seconds;
  session.restart_deadline();
  return session;
}

void Session::restart_deadline() {
  deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds_);
}

std::vector<std::string> Session::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> out{program_};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

std::string Session::selector() const {
  return "app.kubernetes.io/instance=" + name();
}

std::optional<std::string> Session::capture(const std::vector<std::string>& args,
                                            Diagnostics& diagnostics) const {
  // Whole seconds left, rounded up, so a call never starts with a deadline of 0 (none).
  auto left = std::chrono::ceil<std::chrono::seconds>(deadline_ - std::chrono::steady_clock::now());
  RunResult result;
  result.timed_out = left.count() <= 0;
  if (!result.timed_out) result = run_command(argv(args), "", static_cast<int>(left.count()), true);
  if (!result.timed_out && !result.not_started && result.status == 0) return result.output;
  const std::string shown = "`" + shell_words(argv(args)) + "`";
  if (result.timed_out) {
    diagnostics.report(Code::E0707, {},
                       shown + " did not finish within the command's --timeout of " +
                           std::to_string(timeout_seconds_) + "s",
                       "raise --timeout, or check that the cluster answers");
  } else {
    diagnostics.report(
        Code::E0706, {},
        shown + (result.not_started ? std::string(" could not start")
                                    : " exited with status " + std::to_string(result.status)),
        "its own message is above");
  }
  return std::nullopt;
}

std::optional<std::vector<RankPod>> Session::rank_pods(Diagnostics& diagnostics) const {
  std::optional<std::string> json =
      capture({"get", "pods", "-n", namespace_(), "-l", selector(), "-o", "json"}, diagnostics);
  if (!json) return std::nullopt;
  std::string error;
  std::optional<std::vector<RankPod>> pods = parse_rank_pods(*json, name(), error);
  if (!pods) {
    diagnostics.report(Code::E0706, {}, "the pods of `" + env_.unit + "` are unreadable: " + error);
  }
  return pods;
}

bool Session::check_rank(int rank, Diagnostics& diagnostics) const {
  return day2::check_rank(env_, rank, diagnostics);
}

bool check_rank(const AppliedEnv& env, int rank, Diagnostics& diagnostics) {
  if (rank >= 0 && (env.nodes == 0 || rank < env.nodes)) return true;
  diagnostics.report(
      Code::E0751, {}, "`" + env.unit + "` has no rank " + std::to_string(rank),
      env.nodes > 0 ? "its ranks are 0 to " + std::to_string(env.nodes - 1) : "ranks count from 0");
  return false;
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  // Columns two spaces apart, the last one unpadded.
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += "  " + row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size(), ' ');
    }
    out << line << '\n';
  }
}

std::optional<RankPod> Session::running_pod(int rank, Diagnostics& diagnostics) const {
  if (!check_rank(rank, diagnostics)) return std::nullopt;
  std::optional<std::vector<RankPod>> pods = rank_pods(diagnostics);
  if (!pods) return std::nullopt;
  for (const RankPod& pod : *pods) {
    if (pod.rank != rank) continue;
    if (pod.running) return pod;
    diagnostics.report(Code::E0752, {},
                       "rank " + std::to_string(rank) + " of `" + env_.unit + "` (pod `" +
                           printable(pod.name) + "`) is " + printable(pod.phase) + ", not running",
                       "see `mlenvc status " + env_.unit + "`");
    return std::nullopt;
  }
  diagnostics.report(Code::E0752, {},
                     "rank " + std::to_string(rank) + " of `" + env_.unit + "` has no pod",
                     "see `mlenvc status " + env_.unit + "`");
  return std::nullopt;
}

int run_attached(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // As system(3) does: the terminal's Ctrl-C reaches the child, which decides what it means.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (pid < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace mlenv::plan::day2
