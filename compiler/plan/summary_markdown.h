#pragma once
// The plan as a Markdown comment for a pull request (`mlenvc plan --format=markdown`), as
// Atlantis or tfcmt post one: the counts first, warnings and data loss where nobody misses
// them, then one section per env with its changes folded in a <details> block.

#include <ostream>
#include <string>
#include <vector>

#include "compiler/plan/change.h"

namespace mlenv::plan {

/// What the comment says besides the changes.
struct MarkdownContext {
  std::string source;                 ///< the root .mlenv file
  std::vector<std::string> warnings;  ///< e.g. a source that differs from HEAD
  std::vector<std::string> notes;     ///< the target's notes (transport decisions, admin steps)
  std::string commit;                 ///< the plan commit's id, "" when none
};

void render_summary_markdown(std::ostream& out, const PlanDiff& diff,
                             const MarkdownContext& context);

}  // namespace mlenv::plan
