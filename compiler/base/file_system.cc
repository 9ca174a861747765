#include "compiler/base/file_system.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <vector>

#include "compiler/base/limits.h"

namespace mlenv {

std::optional<std::string> DiskFileSystem::read(const std::string& path,
                                                std::string& error) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = "no such file";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "not a regular file";
    return std::nullopt;
  }
  if (static_cast<std::size_t>(st.st_size) > limits::kMaxFileBytes) {
    error = "file is larger than the limit of " + std::to_string(limits::kMaxFileBytes) + " bytes";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open file";
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
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
