#include "compiler/plan/apply/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace mlenv::plan {

RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds) {
  RunResult result;
  // stdin comes from an unlinked temporary file, so a child that does not read it cannot block
  // the parent on a full pipe.
  std::FILE* stdin_file = std::tmpfile();
  if (stdin_file == nullptr) {
    result.not_started = true;
    return result;
  }
  std::fwrite(input.data(), 1, input.size(), stdin_file);
  std::fflush(stdin_file);
  std::rewind(stdin_file);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    std::fclose(stdin_file);
    result.not_started = true;
    return result;
  }
  if (pid == 0) {
    dup2(fileno(stdin_file), STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  std::fclose(stdin_file);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, timeout_seconds > 0 ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0) {
      result.not_started = true;
      return result;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
      }
      result.timed_out = true;
      result.status = 124;
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.not_started = WIFEXITED(status) && WEXITSTATUS(status) == 127;
  return result;
}

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !arg.empty();
    for (char c : arg) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) ||
            std::string_view("-_./=:,@%+").find(c) != std::string_view::npos)) {
        plain = false;
      }
    }
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    std::size_t colon = rest.find(':');
    std::string_view entry = rest.substr(0, colon);
    std::string dir(entry.empty() ? std::string_view(".") : entry);
    std::string candidate = dir;
    candidate += '/';
    candidate.append(name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

std::optional<int> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i == text.size()) return std::nullopt;
    int value = std::stoi(text.substr(start, i - start));
    char unit = text[i++];
    if (unit == 'h') {
      total += value * 3600;
    } else if (unit == 'm') {
      total += value * 60;
    } else if (unit == 's') {
      total += value;
    } else {
      return std::nullopt;
    }
  }
  return total;
}

}  // namespace mlenv::plan
