#include "compiler/plan/content_diff.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

#include "compiler/plan/yaml_fields.h"

namespace mlenv::plan {
namespace {

// A field's value as flatten() shows it: a quoted scalar keeps its quotes.
std::string unquoted(const std::string& text) {
  if (text.empty() || (text[0] != '"' && text[0] != '\'')) return text;
  try {
    YAML::Node scalar = YAML::Load(text);
    if (scalar.IsScalar()) return scalar.Scalar();
  } catch (const YAML::Exception&) {
  }
  return text;
}

std::optional<YAML::Node> json_object(const std::string& quoted) {
  const std::string text = unquoted(quoted);
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return std::nullopt;
  try {
    YAML::Node node = YAML::Load(text);  // JSON is YAML's flow style
    if (node.IsMap()) return node;
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

constexpr std::size_t kMaxCompared = 5000;

}  // namespace

std::optional<std::vector<FieldChange>> json_changes(const std::string& prefix,
                                                     const std::string& before,
                                                     const std::string& after) {
  std::optional<YAML::Node> a = json_object(before);
  std::optional<YAML::Node> b = json_object(after);
  if (!a || !b) return std::nullopt;
  FieldMap old_fields = flatten(*a);
  FieldMap new_fields = flatten(*b);
  auto path = [&](const std::string& field) {
    return prefix.empty() ? field : prefix + "." + field;
  };
  std::vector<FieldChange> out;
  auto x = old_fields.begin();
  auto y = new_fields.begin();
  while (x != old_fields.end() || y != new_fields.end()) {
    if (y == new_fields.end() || (x != old_fields.end() && x->first < y->first)) {
      out.push_back({path(x->first), x->second, std::nullopt});
      ++x;
    } else if (x == old_fields.end() || y->first < x->first) {
      out.push_back({path(y->first), std::nullopt, y->second});
      ++y;
    } else {
      if (x->second != y->second) out.push_back({path(x->first), x->second, y->second});
      ++x;
      ++y;
    }
  }
  return out;
}

std::vector<std::string> line_changes(const std::string& before, const std::string& after,
                                      std::size_t max_lines) {
  std::vector<std::string> a = split_lines(before);
  std::vector<std::string> b = split_lines(after);
  if (a.size() > kMaxCompared || b.size() > kMaxCompared) {
    return {"(" + std::to_string(a.size()) + " lines -> " + std::to_string(b.size()) +
            " lines; too long to compare line by line)"};
  }
  // The longest common subsequence, suffix by suffix: lcs[i][j] for a[i..], b[j..].
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<std::string> out;
  std::size_t changed = 0;
  bool in_run = false;
  auto emit = [&](std::string line, std::size_t at) {
    if (!in_run) {
      if (out.size() < max_lines) out.push_back("@@ line " + std::to_string(at + 1));
      in_run = true;
    }
    ++changed;
    if (out.size() < max_lines) out.push_back(std::move(line));
  };
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      in_run = false;
      ++i;
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      emit("- " + a[i], j);
      ++i;
    } else {
      emit("+ " + b[j], j);
      ++j;
    }
  }
  std::size_t shown = 0;
  for (const std::string& line : out) shown += line.rfind("@@", 0) != 0;
  if (shown < changed) {
    out.push_back("... " + std::to_string(changed - shown) + " more changed lines");
  }
  return out;
}

}  // namespace mlenv::plan
