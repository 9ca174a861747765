#include "harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "process_env.h"
#include "util.h"

#ifndef MLENV_BOOT_BIN
#error "MLENV_BOOT_BIN must name the mlenv-boot executable"
#endif

namespace boot_test {

TempDir::TempDir() {
  char pattern[] = "/tmp/mlenv-boot-test.XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& relative, const std::string& content) const {
  std::filesystem::path full = std::filesystem::path(path_) / relative;
  std::filesystem::create_directories(full.parent_path());
  if (!boot::write_file_atomic(full.string(), content)) throw std::runtime_error("write failed");
  return full.string();
}

void TempDir::symlink(const std::string& relative, const std::string& target) const {
  std::filesystem::path full = std::filesystem::path(path_) / relative;
  std::filesystem::create_directories(full.parent_path());
  std::filesystem::create_symlink(target, full);
}

void TempDir::mkdir(const std::string& relative) const {
  std::filesystem::create_directories(std::filesystem::path(path_) / relative);
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string slurp(const std::string& path) {
  return boot::read_file(path).value_or("");
}

boot::Json test_config(const boot::Json& overrides) {
  boot::Json timeouts = boot::Json::object();
  timeouts.set("discovery_s", 20).set("rendezvous_s", 20).set("heartbeat_s", 0.5).set("grace_s", 2);
  boot::Json rank = boot::Json::object();
  rank.set("env", "JOB_COMPLETION_INDEX");
  boot::Json rendezvous = boot::Json::object();
  rendezvous.set("host", "env-0.env-headless.ns.svc").set("host_env", "").set("port", 29400);
  boot::Json config = boot::Json::object();
  config.set("format_version", 3)
      .set("job", "test/env")
      .set("rank", rank)
      .set("rendezvous", rendezvous)
      .set("nnodes", 2)
      .set("nproc_per_node", 1)
      .set("gpus_per_node", 0)
      .set("master_port", 29500)
      .set("transport", "tcp")
      .set("timeouts", timeouts)
      .set("command", boot::Json::array())
      .set("services", boot::Json::array())
      .set("hostfile", "")
      .set("deepspeed_env", "");
  for (const auto& [key, value] : overrides.as_object()) config.set(key, value);
  return config;
}

std::string write_config(const TempDir& dir, const boot::Json& config, const std::string& name) {
  return dir.write(name, config.pretty());
}

BootProcess start_boot(const TempDir& dir, const std::string& tag,
                       const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env, int max_files) {
  BootProcess process;
  process.out_path = dir.path() + "/" + tag + ".out";
  process.err_path = dir.path() + "/" + tag + ".err";
  std::vector<std::string> argv_strings = {MLENV_BOOT_BIN};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::map<std::string, std::string> environment = boot::read_environ();
  for (const char* name :
       {"NODE_RANK", "PET_NODE_RANK", "JOB_COMPLETION_INDEX", "SLURM_NODEID", "MLENV_RDZV_HOST",
        "MLENV_JOB_TOKEN", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME"}) {
    environment.erase(name);
  }
  // mlenv-boot refuses a rendezvous without a job token, as a platform always gives one.
  environment["MLENV_JOB_TOKEN"] = kTestJobToken;
  for (const auto& [name, value] : env) environment[name] = value;
  std::vector<std::string> env_strings = boot::to_envp(environment);
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  process.pid = ::fork();
  if (process.pid == 0) {
    int out = ::open(process.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(process.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    if (max_files > 0) {
      rlimit limit = {static_cast<rlim_t>(max_files), static_cast<rlim_t>(max_files)};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(126);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return process;
}

bool wait_exit(BootProcess& process, double timeout_s) {
  double deadline = now_s() + timeout_s;
  for (;;) {
    int status = 0;
    rusage usage = {};
    pid_t done = ::wait4(process.pid, &status, WNOHANG, &usage);
    if (done == process.pid) {
      process.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      auto seconds = [](timeval time) {
        return static_cast<double>(time.tv_sec) + time.tv_usec / 1e6;
      };
      process.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
      return true;
    }
    if (now_s() >= deadline) {
      ::kill(process.pid, SIGKILL);
      ::waitpid(process.pid, &status, 0);
      process.exit_code = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_zombie(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool pid_alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

bool wait_for_file(const std::string& path, double timeout_s) {
  double deadline = now_s() + timeout_s;
  while (now_s() < deadline) {
    if (boot::path_exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> env;
  for (const std::string& line : boot::split(slurp(path), '\n')) {
    size_t equals = line.find('=');
    if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return env;
}

}  // namespace boot_test
