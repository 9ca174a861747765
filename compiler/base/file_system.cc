#include "compiler/base/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compiler/base/limits.h"
#include "compiler/base/user_cache.h"

namespace mlenv {
namespace {

struct Closer {
  int fd;
  ~Closer() { ::close(fd); }
};

int open_source(const std::string& path, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    error =
        errno == ENOENT ? "no such file" : "cannot open file: " + std::string(std::strerror(errno));
  }
  return fd;
}

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

bool under(const std::string& path, const std::string& folder) {
  if (folder == "/") return !path.empty() && path[0] == '/';
  return path == folder ||
         (path.size() > folder.size() && path.rfind(folder, 0) == 0 && path[folder.size()] == '/');
}

// Reads through one descriptor, so the checks and the bytes are about the same file even if
// the path is swapped meanwhile. Only a regular file (after following links) whose size stays
// what fstat reported is read: files in /proc report size 0 yet yield content (a symlink to
// /proc/self/environ once passed, and an error excerpt printed the whole environment), and a
// file that grows or shrinks while read is not one program text.
std::optional<std::string> read_descriptor(int fd, std::string& error) {
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

}  // namespace

std::optional<std::string> DiskFileSystem::read(const std::string& path, std::string& error) const {
  int fd = open_source(path, error);
  if (fd < 0) return std::nullopt;
  Closer closer{fd};
  return read_descriptor(fd, error);
}

// The descriptor's own path (/proc/self/fd), not the name's: the file that is read is the
// file that was checked.
std::optional<std::string> DiskFileSystem::read_inside(const std::string& path,
                                                       const std::vector<std::string>& folders,
                                                       std::string& error) const {
  int fd = open_source(path, error);
  if (fd < 0) return std::nullopt;
  Closer closer{fd};
  std::string real = real_path("/proc/self/fd/" + std::to_string(fd));
  if (real.empty()) real = real_path(path);
  bool inside = false;
  for (const std::string& folder : folders) inside = inside || under(real, folder);
  // Nor inside a git directory: `.git/config` may hold a remote's URL with its token.
  if (!inside || real.find("/.git/") != std::string::npos) {
    error =
        "it lies outside the program's repository and the folders of MLENV_PATH, or in a git "
        "directory (a link or a path out of them): sources are read only from there";
    return std::nullopt;
  }
  return read_descriptor(fd, error);
}

std::optional<std::string> DiskFileSystem::foreign_cache(const std::string& folder) const {
  return mlenv::foreign_cache(folder);
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

std::vector<std::string> program_folders(const std::string& root,
                                         const std::vector<std::string>& site) {
  std::string absolute = root;
  if (absolute.empty() || absolute[0] != '/') {
    char cwd[PATH_MAX];
    absolute = std::string(::getcwd(cwd, sizeof cwd) ? cwd : ".") + "/" + root;
  }
  // By the path as named, not as resolved: a folder of the repository that is a link out of it
  // does not make its target the program's folder.
  std::string folder = parent_path(normalize_path(absolute));
  std::string top = folder;
  for (std::string at = folder; !at.empty(); at = parent_path(at)) {
    struct stat st {};
    if (::lstat((at + "/.git").c_str(), &st) == 0) {
      top = at;
      break;
    }
    if (at == "/") break;
  }
  std::vector<std::string> folders;
  if (std::string real = real_path(top); !real.empty()) folders.push_back(real);
  for (const std::string& entry : site) {
    if (std::string real = real_path(entry); !real.empty()) folders.push_back(real);
  }
  return folders;
}

}  // namespace mlenv
