#include "compiler/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace mlenv {
namespace {

// The message of every failed step: the path the caller asked for, and the system's reason.
std::string failed(const std::string& path) {
  return "cannot write `" + path + "`: " + std::strerror(errno);
}

// Every byte, through short writes and EINTR; false with errno set on the first failure.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The temporary file's name pattern: hidden, beside the target, unique per call (mkstemp), so
// two writers never share one and a leftover is recognisably ours.
std::string temporary_pattern(const std::string& path, std::string_view prefix) {
  std::size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + std::string(prefix) + name + ".mlenv-tmp-XXXXXX";
}

}  // namespace

bool write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode,
                       std::string& error, std::string_view prefix) {
  std::string pattern = temporary_pattern(path, prefix);
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    error = failed(path);
    return false;
  }
  const std::string temporary(name.data());
  bool ok = ::fchmod(fd, static_cast<mode_t>(mode)) == 0;
  if (!ok) error = failed(path);
  if (ok && !(ok = write_all(fd, bytes))) error = failed(path);
  // close() reports what a network file system deferred (EIO, EDQUOT, ENOSPC).
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = failed(path);
  }
  if (ok && !(ok = ::rename(temporary.c_str(), path.c_str()) == 0)) {
    error = failed(path);
  }
  if (!ok) ::unlink(temporary.c_str());
  return ok;
}

}  // namespace mlenv
