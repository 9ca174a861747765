#pragma once
// The plan summary for people (Terraform's symbols and closing line) and for tools (JSON).
// The text form is also the body of the plan commit's message.

#include <ostream>
#include <string>

#include "compiler/plan/change.h"

namespace mlenv::plan {

/// `+ create`, `~ update` with field changes, `-/+ replace` with its reason, `- delete`, `= keep`
/// (a claim that stays), the changed non-object files, and `Plan: A to create, B to update, C to
/// replace, D to delete.`
void render_summary_text(std::ostream& out, const PlanDiff& diff);

/// One change as the text summary shows it: its symbol and address, then its reason, data-loss
/// mark and field lines, indented.
void render_change_text(std::ostream& out, const Change& change);
/// One changed non-object file as the text summary shows it.
void render_file_text(std::ostream& out, const FileChange& file);
/// Why a change needs --allow-destroy (required_flag), as its mark says: "destroys its data",
/// "shared by the envs of its namespace", ...
const char* protection(const Change& change);
/// How many changes destroy data.
std::size_t data_losses(const PlanDiff& diff);

/// What the plan says of a kept claim: `kept with its data; --allow-destroy=ADDRESS deletes it`.
std::string kept_line(const Change& change);

/// The closing line alone: `, K to keep` before its period when claims are kept.
std::string summary_line(const PlanDiff& diff);

/// One JSON object: format_version, changes (address, action, reason, file, destroys_data,
/// allow_destroy, shared, notes, fields), files,
/// inputs_changed and the counts (create, update, replace, delete, keep). `extra` is inserted
/// verbatim as further members ("" for none).
void render_summary_json(std::ostream& out, const PlanDiff& diff, const std::string& extra = {});

}  // namespace mlenv::plan
