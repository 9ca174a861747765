#pragma once
// The plan summary for people (Terraform's symbols and closing line) and for tools (JSON).
// The text form is also the body of the plan commit's message.

#include <ostream>
#include <string>

#include "compiler/plan/change.h"

namespace mlenv::plan {

/// `+ create`, `~ update` with field changes, `-/+ replace` with its reason, `- delete`, the
/// changed non-object files, and `Plan: A to create, B to update, C to replace, D to delete.`
void render_summary_text(std::ostream& out, const PlanDiff& diff);

/// The closing line alone.
std::string summary_line(const PlanDiff& diff);

/// One JSON object: format_version, changes (address, action, reason, fields), files,
/// inputs_changed and the counts. `extra` is inserted verbatim as further members ("" for none).
void render_summary_json(std::ostream& out, const PlanDiff& diff, const std::string& extra = {});

}  // namespace mlenv::plan
