#include "compiler/diag/diagnostic.h"

#include <algorithm>
#include <cctype>

namespace mlenv {

const std::vector<CodeInfo>& all_codes() {
  static const std::vector<CodeInfo> codes = {
#define MLENV_DIAG(id, severity, summary, explanation) \
  {Code::id, #id, Severity::severity, summary, explanation},
#include "compiler/diag/codes_front.def"
#include "compiler/diag/codes_target.def"
#include "compiler/diag/codes_plan.def"
#undef MLENV_DIAG
  };
  return codes;
}

const CodeInfo& code_info(Code code) { return all_codes().at(static_cast<std::size_t>(code)); }

const CodeInfo* find_code(std::string_view id) {
  for (const CodeInfo& info : all_codes()) {
    if (info.id.size() == id.size() &&
        std::equal(id.begin(), id.end(), info.id.begin(), [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == b;
        })) {
      return &info;
    }
  }
  return nullptr;
}

Diagnostic& Diagnostics::report(Code code, SourceRange range, std::string message,
                                std::string label) {
  Diagnostic d;
  d.code = code;
  d.severity = code_info(code).severity;
  d.message = std::move(message);
  d.range = range;
  d.label = std::move(label);
  add(std::move(d));
  return all_.back();
}

void Diagnostics::add(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::Error) ++errors_;
  all_.push_back(std::move(diagnostic));
}

void Diagnostics::append(const Diagnostics& other) {
  for (const Diagnostic& d : other.all()) add(d);
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                 std::tolower(static_cast<unsigned char>(b[j - 1]))
                             ? 0
                             : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace mlenv
