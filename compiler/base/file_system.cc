#include "compiler/base/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "compiler/base/limits.h"

namespace mlenv {

// Reads through one descriptor, so the checks and the bytes are about the same file even if
// the path is swapped meanwhile. Only a regular file (after following links) whose size stays
// what fstat reported is read: files in /proc report size 0 yet yield content (a symlink to
// /proc/self/environ once passed, and an error excerpt printed the whole environment), and a
// file that grows or shrinks while read is not one program text.
std::optional<std::string> DiskFileSystem::read(const std::string& path, std::string& error) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    error =
        errno == ENOENT ? "no such file" : "cannot open file: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read file: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "not a regular file";
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > limits::kMaxFileBytes) {
    error = "file is larger than the limit of " + std::to_string(limits::kMaxFileBytes) + " bytes";
    return std::nullopt;
  }
  // One byte more than the reported size tells a file that grew from one that did not.
  std::string text(size + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read file: " + std::string(std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != size) {
    error = "the file's size changed while it was read (" + std::to_string(size) +
            " bytes reported): not an ordinary file";
    return std::nullopt;
  }
  text.resize(size);
  return text;
}

std::optional<std::string> MemoryFileSystem::read(const std::string& path,
                                                  std::string& error) const {
  auto it = files_.find(path);
  if (it == files_.end()) {
    error = "no such file";
    return std::nullopt;
  }
  if (it->second.size() > limits::kMaxFileBytes) {
    error = "file is larger than the limit of " + std::to_string(limits::kMaxFileBytes) + " bytes";
    return std::nullopt;
  }
  return it->second;
}

std::string normalize_path(const std::string& path) {
  bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out.empty() ? "." : out;
}

std::string parent_path(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace mlenv
