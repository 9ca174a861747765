#include "compiler/plan/output_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "compiler/base/atomic_file.h"
#include "compiler/base/parallel.h"

namespace mlenv::plan {
namespace {

bool is_safe_relative(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// The first symbolic link on the way from `root` to the file `relative` (its folders), or "".
// create_directories and fopen follow links, and a link in an old `out/` once sent a build's
// file into `.git/config` and out of the checkout.
std::string link_on_the_way(const std::string& root, const std::string& relative) {
  std::string at = root;
  for (std::size_t slash = relative.find('/'); slash != std::string::npos;
       slash = relative.find('/', slash + 1)) {
    at = root + "/" + relative.substr(0, slash);
    std::error_code ec;
    if (std::filesystem::is_symlink(at, ec)) return at;
  }
  return "";
}

}  // namespace

std::string write_output_tree(const target::Output& output, const std::string& root) {
  namespace fs = std::filesystem;
  std::set<std::string> dirs;
  for (const target::File& f : output.files) {
    if (!is_safe_relative(f.path)) return "refusing to write `" + f.path + "` outside the output";
    if (std::string link = link_on_the_way(root, f.path); !link.empty())
      return "refusing to write through the symbolic link `" + link + "`";
    dirs.insert((fs::path(root) / f.path).parent_path().string());
  }
  for (const std::string& dir : dirs) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return "cannot create directory `" + dir + "`: " + ec.message();
  }
  // Creating files is the kernel's work, and a tree of a thousand envs has tens of thousands:
  // both cores create them. Each file is whole (a temporary file renamed over it, which also
  // replaces a link at the file rather than following it) or the build reports an error.
  std::vector<std::string> errors(output.files.size());
  parallel_for(
      output.files.size(),
      [&](std::size_t i) {
        const target::File& f = output.files[i];
        std::string error;
        if (!write_file_atomic(root + "/" + f.path, f.content, 0644, error)) errors[i] = error;
      },
      256);
  for (const std::string& error : errors) {
    if (!error.empty()) return error;
  }
  return "";
}

void write_stream_object(const target::File& object, std::ostream& out) {
  out << "---\n" << object.content;
}

void write_object_stream(const target::Output& output, std::ostream& out) {
  for (std::size_t i : output.stream) write_stream_object(output.files[i], out);
}

}  // namespace mlenv::plan
