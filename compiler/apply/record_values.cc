#include "compiler/apply/record_values.h"

#include <algorithm>
#include <cctype>

#include "compiler/apply/image_builder.h"
#include "compiler/apply/records.h"

namespace mlenv::plan {
namespace {

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool hex_id(std::string_view id) {
  return (id.size() == 40 || id.size() == 64) && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A path as plan writes `Plan-Directory:`: relative to the work tree, inside it, printable.
bool plan_directory(std::string_view dir) {
  if (dir.empty() || dir.front() == '/' || dir.front() == '-') return false;
  if (std::any_of(dir.begin(), dir.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return false;
  std::size_t start = 0;
  while (start <= dir.size()) {
    std::size_t end = std::min(dir.find('/', start), dir.size());
    if (dir.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool is_object_name(std::string_view name) {
  return !name.empty() && name.size() <= 253 && lower_alnum(name.front()) &&
         lower_alnum(name.back()) && std::all_of(name.begin(), name.end(), [](char c) {
           return lower_alnum(c) || c == '-' || c == '.';
         });
}

bool is_slurm_job_id(std::string_view id) {
  return !id.empty() && id.size() <= 20 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool valid_context_name(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == ':' || c == '@' || c == '/';
  });
}

bool valid_trailer_value(std::string_view key, std::string_view value) {
  if (key == kParentTrailer) return is_object_name(value);
  if (key == kRuntimeTrailer) return hex_id(value);
  if (key == kPlanDirTrailer) return plan_directory(value);
  if (key == kImageTrailer) return is_digest_reference(value) && value.front() != '-';
  return false;
}

}  // namespace mlenv::plan
