// The day-2 commands' core: resolve the env the user named and hand it to the day-2 driver of
// its platform; and the helpers every driver shares.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "compiler/day2/commands.h"
#include "compiler/day2/day2_driver.h"
#include "compiler/diag/render.h"
#include "targets/provider.h"

namespace mlenv::plan::day2 {
namespace fs = std::filesystem;
namespace {

const Day2Driver& driver_of(const AppliedEnv& env) {
  return target::provider(env.plan.platform).day2();
}

}  // namespace

int show_status(const EnvRequest& target, std::ostream& out, Diagnostics& diagnostics) {
  std::vector<AppliedEnv> envs;
  if (target.env.empty()) {
    std::optional<std::vector<AppliedEnv>> all = applied_envs(diagnostics);
    if (!all) return 1;
    if (all->empty()) out << "No env is applied.\n";
    envs = std::move(*all);
  } else if (std::optional<AppliedEnv> env = resolve_env(target.env, diagnostics)) {
    envs.push_back(std::move(*env));
  } else {
    return 1;
  }
  bool ok = true;
  for (std::size_t i = 0; i < envs.size(); ++i) {
    if (i > 0) out << '\n';
    const Day2Driver& driver = driver_of(envs[i]);
    ok = driver.status(std::move(envs[i]), target, out, diagnostics) && ok;
  }
  return ok ? 0 : 1;
}

int show_logs(const LogsRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  std::optional<AppliedEnv> env = resolve_env(request.target.env, diagnostics, true);
  if (!env) return 1;
  const Day2Driver& driver = driver_of(*env);
  if (env->destroyed && !driver.logs_outlive_env()) {
    diagnostics.report(Code::E0750, {}, "`" + env->unit + "` is not applied: it was destroyed",
                       "its logs went with it; apply it again: `mlenvc apply`");
    return 1;
  }
  return driver.logs(std::move(*env), request, out, diagnostics);
}

int open_shell(const ShellRequest& request, Diagnostics& diagnostics) {
  std::optional<AppliedEnv> env = resolve_env(request.target.env, diagnostics);
  if (!env) return 1;
  return driver_of(*env).shell(std::move(*env), request, diagnostics);
}

int sync_workspace(const SyncRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  if (!check_sync_dir(request.dir, diagnostics)) return 1;
  std::optional<AppliedEnv> env = resolve_env(request.target.env, diagnostics);
  if (!env) return 1;
  return driver_of(*env).sync(std::move(*env), request, out, diagnostics);
}

int port_forward(const PortForwardRequest& request, Diagnostics& diagnostics) {
  std::optional<AppliedEnv> env = resolve_env(request.target.env, diagnostics);
  if (!env) return 1;
  return driver_of(*env).port_forward(std::move(*env), request, diagnostics);
}

int show_urls(const EnvRequest& target, std::ostream& out, Diagnostics& diagnostics) {
  std::optional<AppliedEnv> env = resolve_env(target.env, diagnostics);
  if (!env) return 1;
  return driver_of(*env).urls(std::move(*env), target, out, diagnostics);
}

int dev_session(const DevSessionRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  if (!check_sync_dir(request.dir, diagnostics)) return 1;
  std::optional<AppliedEnv> env = resolve_env(request.target.env, diagnostics);
  if (!env) return 1;
  return driver_of(*env).dev_session(std::move(*env), request, out, diagnostics);
}

bool check_sync_dir(const std::string& dir, Diagnostics& diagnostics) {
  std::error_code error;
  if (fs::is_directory(dir, error)) return true;
  diagnostics.report(Code::E0754, {}, "`" + printable(dir) + "` is not a directory",
                     "sync copies a directory's contents into /workspace");
  return false;
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

int run_attached(const std::vector<std::string>& argv, const std::vector<std::string>* environment,
                 const std::string& directory) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  if (environment) {
    for (const std::string& entry : *environment) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
  }
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
    if (!directory.empty() && chdir(directory.c_str()) != 0) _exit(127);
    if (environment) {
      execve(args[0], args.data(), env.data());
    } else {
      execv(args[0], args.data());
    }
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
