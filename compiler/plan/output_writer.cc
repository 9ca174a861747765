#include "compiler/plan/output_writer.h"

#include <cstdio>
#include <filesystem>
#include <set>

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
  std::set<std::string> made;
  std::error_code ec;
  for (const target::File& f : output.files) {
    if (!is_safe_relative(f.path)) return "refusing to write `" + f.path + "` outside the output";
    fs::path full = fs::path(root) / f.path;
    std::string dir = full.parent_path().string();
    if (made.insert(dir).second) {
      fs::create_directories(dir, ec);
      if (ec) return "cannot create directory `" + dir + "`: " + ec.message();
    }
    std::FILE* file = std::fopen(full.c_str(), "wb");
    if (!file) return "cannot write `" + full.string() + "`";
    bool ok = std::fwrite(f.content.data(), 1, f.content.size(), file) == f.content.size();
    ok = std::fclose(file) == 0 && ok;
    if (!ok) return "cannot write `" + full.string() + "`";
  }
  return "";
}

void write_object_stream(const target::Output& output, std::ostream& out) {
  for (std::size_t i : output.stream) {
    out << "---\n" << output.files[i].content;
  }
}

}  // namespace mlenv::plan
