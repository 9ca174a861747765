#pragma once
// A diagnostic is a value: code, severity, message, the range it points at, and notes. Phases
// only collect them; rendering to text or JSON happens at the edge (render.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/base/source.h"

namespace mlenv {

enum class Severity : std::uint8_t { Error, Warning, Note };

/// Every diagnostic code, from the registry files `codes_*.def` and the codes only one
/// target reports (targets/<target>/codes.def, collected by CMake).
enum class Code : std::uint16_t {
#define MLENV_DIAG(id, severity, summary, explanation) id,
#include "compiler/diag/codes_front.def"
#include "compiler/diag/codes_plan.def"
#include "compiler/diag/codes_target.def"
#include "compiler/diag/target_codes.def"  // every target's codes.def, generated
#undef MLENV_DIAG
};

/// A secondary message, optionally pointing at another place ("first declared here").
struct DiagnosticNote {
  std::string message;
  SourceRange range;  ///< invalid when the note has no location
};

struct Diagnostic {
  Code code{};
  Severity severity = Severity::Error;
  std::string message;  ///< one line, no trailing period
  SourceRange range;    ///< the subject; invalid for diagnostics about no source (a missing file)
  std::string label;    ///< shown under the caret ("did you mean `per_node`?")
  std::vector<DiagnosticNote> notes;
};

/// Registry entry for one code.
struct CodeInfo {
  Code code;
  std::string_view id;  ///< "E0302"
  Severity severity;
  std::string_view summary;
  std::string_view explanation;
};

/// All codes, in registry order.
const std::vector<CodeInfo>& all_codes();
const CodeInfo& code_info(Code code);
/// Looks a code up by its id ("E0302", case-insensitive); nullptr if unknown.
const CodeInfo* find_code(std::string_view id);

/// Collects diagnostics in the order phases report them. Only the first kMaxKept are kept
/// (a hostile 69 KB file once printed 1 GB of diagnostics); the rest are counted.
class Diagnostics {
 public:
  static constexpr std::size_t kMaxKept = 100;

  /// Adds a diagnostic with the registry's default severity for `code`.
  Diagnostic& report(Code code, SourceRange range, std::string message, std::string label = {});
  void add(Diagnostic diagnostic);
  void append(const Diagnostics& other);

  const std::vector<Diagnostic>& all() const { return all_; }
  std::size_t error_count() const { return errors_; }
  bool has_errors() const { return errors_ != 0; }
  /// Diagnostics reported past kMaxKept, counted but not kept.
  std::size_t dropped() const { return dropped_; }
  /// False once no further diagnostic would be kept: callers skip costly hints then.
  bool keeps_more() const { return all_.size() < kMaxKept; }

 private:
  Diagnostic& keep(Diagnostic diagnostic);
  std::size_t kept_errors() const;

  std::vector<Diagnostic> all_;
  std::size_t errors_ = 0;
  std::size_t dropped_ = 0;
  Diagnostic overflow_;
};

/// The closest candidate within a small edit distance, for "did you mean" hints; "" if none.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mlenv
