#include "compiler/plan/git_credentials.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

extern char** environ;

namespace mlenv::plan {
namespace {

// The largest answer read from `git credential fill`: a user name and a password or token.
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

// Writes all of `text` to `fd`; false on an error (the helper exited early).
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// `git credential fill` with `request` on its input: its output, or nullopt when git cannot run
// or fails (no helper knows the URL and no terminal to ask on). Its stderr is the user's: git
// prompts there.
std::optional<std::string> credential_fill(const std::string& request) {
  int to_git[2], from_git[2];
  if (::pipe2(to_git, O_CLOEXEC) != 0) return std::nullopt;
  if (::pipe2(from_git, O_CLOEXEC) != 0) {
    ::close(to_git[0]);
    ::close(to_git[1]);
    return std::nullopt;
  }
  const char* argv[] = {"git", "credential", "fill", nullptr};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(to_git[0], 0);
    ::dup2(from_git[1], 1);
    ::execvp(argv[0], const_cast<char**>(argv));
    ::_exit(127);
  }
  ::close(to_git[0]);
  ::close(from_git[1]);
  // A helper that exits without reading must not kill us with SIGPIPE.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  bool sent = pid > 0 && write_all(to_git[1], request);
  ::close(to_git[1]);
  ::sigaction(SIGPIPE, &old, nullptr);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; pid > 0 && (n = ::read(from_git[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || answer.size() + static_cast<std::size_t>(n) > kMaxAnswerBytes) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(from_git[0]);
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid <= 0 || !sent || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return answer;
}

// The value of `key=` in git credential's answer (git-credential(1), "INPUT/OUTPUT FORMAT"),
// or "".
std::string answer_value(const std::string& answer, const std::string& key) {
  std::size_t start = 0;
  while (start < answer.size()) {
    std::size_t end = answer.find('\n', start);
    if (end == std::string::npos) end = answer.size();
    std::string line = answer.substr(start, end - start);
    if (line.starts_with(key + "=")) return line.substr(key.size() + 1);
    start = end + 1;
  }
  return "";
}

// A user name and password for `url` from the user's credential helpers, as git would find
// them; GIT_PASSTHROUGH when there are none.
int userpass_from_git(git_credential** out, const char* url, const char* username) {
  std::string request = std::string("url=") + url + "\n";
  if (username != nullptr && *username != '\0')
    request += std::string("username=") + username + "\n";
  std::optional<std::string> answer = credential_fill(request + "\n");
  if (!answer) return GIT_PASSTHROUGH;
  std::string user = answer_value(*answer, "username");
  std::string password = answer_value(*answer, "password");
  if (user.empty() && password.empty()) return GIT_PASSTHROUGH;
  return git_credential_userpass_plaintext_new(out, user.c_str(), password.c_str());
}

}  // namespace

int acquire_credentials(git_credential** out, const char* url, const char* username_from_url,
                        unsigned int allowed_types, void* payload) {
  auto* state = static_cast<CredentialState*>(payload);
  if (++state->asked > 1) return GIT_PASSTHROUGH;
  if ((allowed_types & GIT_CREDENTIAL_SSH_KEY) != 0) {
    return git_credential_ssh_key_from_agent(
        out,
        username_from_url != nullptr && *username_from_url != '\0' ? username_from_url : "git");
  }
  if ((allowed_types & GIT_CREDENTIAL_USERPASS_PLAINTEXT) != 0)
    return userpass_from_git(out, url, username_from_url);
  return GIT_PASSTHROUGH;
}

}  // namespace mlenv::plan
