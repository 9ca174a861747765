#include "compiler/diag/diagnostic.h"

#include <algorithm>
#include <cctype>

#include "compiler/diag/target_codes_text.h"  // spliced into shared codes' texts, generated

namespace mlenv {

const std::vector<CodeInfo>& all_codes() {
  static const std::vector<CodeInfo> codes = {
#define MLENV_DIAG(id, severity, summary, explanation) \
  {Code::id, #id, Severity::severity, summary, explanation},
#include "compiler/diag/codes_front.def"
#include "compiler/diag/codes_plan.def"
#include "compiler/diag/codes_target.def"
#include "compiler/diag/target_codes.def"
#undef MLENV_DIAG
  };
  return codes;
}

const CodeInfo& code_info(Code code) {
  return all_codes().at(static_cast<std::size_t>(code));
}

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
  return keep(std::move(d));
}

void Diagnostics::add(Diagnostic diagnostic) {
  keep(std::move(diagnostic));
}

namespace {

// Messages quote user text (a value that does not match, a name); a 60,000-character value
// is shown by its first kMaxMessage bytes.
constexpr std::size_t kMaxMessage = 300;

void shorten(std::string& text) {
  if (text.size() <= kMaxMessage) return;
  std::size_t cut = kMaxMessage;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  text += "\u2026";
}

}  // namespace

Diagnostic& Diagnostics::keep(Diagnostic diagnostic) {
  shorten(diagnostic.message);
  shorten(diagnostic.label);
  if (diagnostic.severity == Severity::Error) ++errors_;
  if (all_.size() >= kMaxKept) {
    // Counted, not kept: the caller may still add notes, to a scratch value.
    ++dropped_;
    overflow_ = std::move(diagnostic);
    return overflow_;
  }
  all_.push_back(std::move(diagnostic));
  return all_.back();
}

void Diagnostics::append(const Diagnostics& other) {
  for (const Diagnostic& d : other.all()) add(d);
  dropped_ += other.dropped_;
  errors_ += other.errors_ - other.kept_errors();
}

std::size_t Diagnostics::kept_errors() const {
  return static_cast<std::size_t>(std::count_if(
      all_.begin(), all_.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

namespace {

// Levenshtein distance, case-insensitive, or `bound` as soon as it cannot be below `bound`
// (every entry of a row is at least the row's minimum, so the distance is too).
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t bound) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    std::size_t row_min = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                 std::tolower(static_cast<unsigned char>(b[j - 1]))
                             ? 0
                             : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      row_min = std::min(row_min, row[j]);
      diagonal = above;
    }
    if (row_min >= bound) return bound;
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // Bounded work per call, so that 30,000 unknown names in a file of 30,000 declarations stay
  // fast: no hint for words longer than any sensible name, only candidates whose length is
  // within the distance allowed (the length difference is a lower bound of the distance), at
  // most kMaxCompared of them, and each comparison stops once it cannot win.
  constexpr std::size_t kMaxWord = 64;
  constexpr std::size_t kMaxCompared = 256;
  std::string best;
  if (word.size() > kMaxWord) return best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  std::size_t compared = 0;
  for (const std::string& candidate : candidates) {
    std::size_t gap = candidate.size() > word.size() ? candidate.size() - word.size()
                                                     : word.size() - candidate.size();
    if (gap >= best_distance) continue;
    if (++compared > kMaxCompared) break;
    std::size_t d = edit_distance(word, candidate, best_distance);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace mlenv
