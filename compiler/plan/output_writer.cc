#include "compiler/plan/output_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

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

}  // namespace

std::string write_output_tree(const target::Output& output, const std::string& root) {
  namespace fs = std::filesystem;
  std::set<std::string> dirs;
  for (const target::File& f : output.files) {
    if (!is_safe_relative(f.path)) return "refusing to write `" + f.path + "` outside the output";
    dirs.insert((fs::path(root) / f.path).parent_path().string());
  }
  for (const std::string& dir : dirs) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return "cannot create directory `" + dir + "`: " + ec.message();
  }
  // Creating files is the kernel's work, and a tree of a thousand envs has tens of thousands:
  // both cores create them. Each file is whole or the build reports an error.
  std::vector<std::string> errors(output.files.size());
  parallel_for(
      output.files.size(),
      [&](std::size_t i) {
        const target::File& f = output.files[i];
        std::string full = root + "/" + f.path;
        std::FILE* file = std::fopen(full.c_str(), "wb");
        bool ok =
            file && std::fwrite(f.content.data(), 1, f.content.size(), file) == f.content.size();
        int error = errno;
        if (file && std::fclose(file) != 0 && ok) {
          ok = false;
          error = errno;
        }
        if (!ok) errors[i] = "cannot write `" + full + "`: " + std::strerror(error);
      },
      256);
  for (const std::string& error : errors) {
    if (!error.empty()) return error;
  }
  return "";
}

void write_object_stream(const target::Output& output, std::ostream& out) {
  for (std::size_t i : output.stream) {
    out << "---\n" << output.files[i].content;
  }
}

}  // namespace mlenv::plan
