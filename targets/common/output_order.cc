#include "targets/common/output_order.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace mlenv::target {

void sort_files(Output& out) {
  std::vector<std::size_t> order(out.files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return out.files[a].path < out.files[b].path; });
  std::vector<std::size_t> where(order.size());
  std::vector<File> sorted;
  sorted.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    where[order[i]] = i;
    sorted.push_back(std::move(out.files[order[i]]));
  }
  out.files = std::move(sorted);
  for (std::size_t& i : out.stream) i = where[i];
}

Output merge_outputs(std::vector<Output> parts) {
  if (parts.size() == 1) return std::move(parts.front());
  Output out;
  std::map<std::string, std::size_t> index;  // path -> index in out.files
  for (Output& part : parts) {
    std::vector<std::size_t> where(part.files.size());
    for (std::size_t i = 0; i < part.files.size(); ++i) {
      auto [it, added] = index.try_emplace(part.files[i].path, out.files.size());
      where[i] = it->second;
      if (added) {
        out.files.push_back(std::move(part.files[i]));
      } else if (out.files[it->second].content != part.files[i].content) {
        throw std::logic_error("two targets emit " + part.files[i].path + " differently");
      }
    }
    for (std::size_t i : part.stream) out.stream.push_back(where[i]);
    out.notes.insert(out.notes.end(), part.notes.begin(), part.notes.end());
    out.note_details.insert(out.note_details.end(), part.note_details.begin(),
                            part.note_details.end());
  }
  sort_files(out);
  return out;
}

}  // namespace mlenv::target
