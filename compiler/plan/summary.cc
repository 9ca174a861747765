#include "compiler/plan/summary.h"

#include <algorithm>

#include "compiler/diag/render.h"

namespace mlenv::plan {
namespace {

const char* symbol(Action action) {
  switch (action) {
    case Action::Create:
      return "+";
    case Action::Update:
      return "~";
    case Action::Replace:
      return "-/+";
    case Action::Delete:
      return "-";
    case Action::Keep:
      return "=";
  }
  return "~";
}

// The longest multi-line value shown whole, escaped; a longer one is a document (a script, a
// config) that the pull request's diff shows in full.
constexpr std::size_t kMaxEscapedValue = 512;

// Multi-line values are shown escaped as `--format=json` writes them, quoted: a command
// argument `curl ... | sh` then a newline must be seen in review, not "(55 bytes of text)".
std::string shown(const std::string& value) {
  std::size_t lines = static_cast<std::size_t>(std::count(value.begin(), value.end(), '\n'));
  if (value.find("\\n") != std::string::npos || lines > 0) {
    if (value.size() <= kMaxEscapedValue) return '"' + printable(json_escape(value)) + '"';
    return "(" + std::to_string(value.size()) + " bytes of text)";
  }
  std::string text = printable(value);
  if (text.size() > 72) return text.substr(0, 69) + "...";
  return text;
}

void render_field(std::ostream& out, const FieldChange& field) {
  if (!field.before) {
    out << "      + " << printable(field.path) << ": " << shown(*field.after) << '\n';
  } else if (!field.after) {
    out << "      - " << printable(field.path) << ": " << shown(*field.before) << '\n';
  } else {
    out << "      ~ " << printable(field.path) << ": " << shown(*field.before) << " -> "
        << shown(*field.after) << '\n';
  }
}

void json_optional(std::ostream& out, const char* key, const std::optional<std::string>& value) {
  out << ",\"" << key << "\":";
  if (value) {
    out << '"' << json_escape(*value) << '"';
  } else {
    out << "null";
  }
}

void render_fields_json(std::ostream& out, const std::vector<FieldChange>& fields) {
  bool first = true;
  for (const FieldChange& field : fields) {
    out << (first ? "" : ",") << "{\"path\":\"" << json_escape(field.path) << '"';
    json_optional(out, "before", field.before);
    json_optional(out, "after", field.after);
    out << '}';
    first = false;
  }
}

}  // namespace

const char* protection(const Change& change) {
  if (change.destroys_data) return "destroys its data";
  if (change.shared) return "shared by the envs of its namespace";
  if (is_admin_address(change.address)) return "belongs to the platform team (`_admin`)";
  return "grants pods their privileges";
}

std::string summary_line(const PlanDiff& diff) {
  const std::size_t kept = diff.count(Action::Keep);
  return "Plan: " + std::to_string(diff.count(Action::Create)) + " to create, " +
         std::to_string(diff.count(Action::Update)) + " to update, " +
         std::to_string(diff.count(Action::Replace)) + " to replace, " +
         std::to_string(diff.count(Action::Delete)) + " to delete" +
         (kept == 0 ? "" : ", " + std::to_string(kept) + " to keep") + ".";
}

std::string kept_line(const Change& change) {
  return "kept with its data; " + required_flag(change) + " deletes it";
}

void render_change_text(std::ostream& out, const Change& change) {
  out << std::string(change.action == Action::Replace ? 0 : 2, ' ') << symbol(change.action) << ' '
      << printable(change.address) << '\n';
  if (change.action == Action::Replace)
    out << "      # forces replacement: " << printable(change.reason) << '\n';
  const std::string flag = required_flag(change);
  if (change.action == Action::Keep) {
    out << "      # " << printable(kept_line(change)) << '\n';
  } else if (!flag.empty()) {
    out << "      ! " << protection(change) << ": apply needs " << printable(flag) << '\n';
  }
  for (const std::string& note : change.notes) out << "      # " << printable(note) << '\n';
  for (const FieldChange& field : change.fields) render_field(out, field);
}

void render_file_text(std::ostream& out, const FileChange& file) {
  out << "  " << symbol(file.action) << ' ' << printable(file.path) << '\n';
  for (const FieldChange& field : file.fields) render_field(out, field);
  for (const std::string& line : file.lines) out << "      " << printable(line) << '\n';
}

std::size_t data_losses(const PlanDiff& diff) {
  return static_cast<std::size_t>(std::count_if(diff.changes.begin(), diff.changes.end(),
                                                [](const Change& c) { return c.destroys_data; }));
}

void render_summary_text(std::ostream& out, const PlanDiff& diff) {
  if (diff.empty()) {
    out << "No changes: the plan matches the committed plan.\n";
    out << summary_line(diff) << '\n';
    return;
  }
  for (const Change& change : diff.changes) render_change_text(out, change);
  if (!diff.files.empty()) {
    if (!diff.changes.empty()) out << '\n';
    out << "Files:\n";
    for (const FileChange& file : diff.files) render_file_text(out, file);
  }
  if (diff.inputs_changed != 0) {
    out << "\nInput digests changed in " << diff.inputs_changed << " plan.json "
        << (diff.inputs_changed == 1 ? "file" : "files") << " with no object change.\n";
  }
  if (diff.shared_copies != 0) {
    out << "\nShared objects: " << diff.shared_copies << " env "
        << (diff.shared_copies == 1 ? "copy" : "copies")
        << " came or went with their envs; the objects stay as they are.\n";
  }
  std::size_t losses = data_losses(diff);
  if (losses != 0) {
    out << '\n'
        << losses << (losses == 1 ? " object holds" : " objects hold")
        << " data that this plan would destroy (marked !).\n";
  }
  out << '\n' << summary_line(diff) << '\n';
}

void render_summary_json(std::ostream& out, const PlanDiff& diff, const std::string& extra) {
  out << "{\"format_version\":1,\"changes\":[";
  bool first = true;
  for (const Change& change : diff.changes) {
    out << (first ? "" : ",") << "{\"address\":\"" << json_escape(change.address)
        << "\",\"action\":\"" << action_name(change.action) << "\",\"reason\":\""
        << json_escape(change.reason) << "\",\"file\":\"" << json_escape(change.file)
        << "\",\"destroys_data\":" << (change.destroys_data ? "true" : "false")
        << ",\"allow_destroy\":\"" << json_escape(required_flag(change))
        << "\",\"shared\":" << (change.shared ? "true" : "false") << ",\"notes\":[";
    for (std::size_t i = 0; i < change.notes.size(); ++i)
      out << (i ? "," : "") << '"' << json_escape(change.notes[i]) << '"';
    out << "],\"fields\":[";
    first = false;
    render_fields_json(out, change.fields);
    out << "]}";
  }
  out << "],\"files\":[";
  first = true;
  for (const FileChange& file : diff.files) {
    out << (first ? "" : ",") << "{\"path\":\"" << json_escape(file.path) << "\",\"action\":\""
        << action_name(file.action) << "\",\"fields\":[";
    first = false;
    render_fields_json(out, file.fields);
    out << "],\"lines\":[";
    for (std::size_t i = 0; i < file.lines.size(); ++i) {
      out << (i ? "," : "") << '"' << json_escape(file.lines[i]) << '"';
    }
    out << "]}";
  }
  out << "],\"inputs_changed\":" << diff.inputs_changed
      << ",\"shared_copies\":" << diff.shared_copies << ",\"create\":" << diff.count(Action::Create)
      << ",\"update\":" << diff.count(Action::Update)
      << ",\"replace\":" << diff.count(Action::Replace)
      << ",\"delete\":" << diff.count(Action::Delete) << ",\"keep\":" << diff.count(Action::Keep);
  if (!extra.empty()) out << ',' << extra;
  out << "}\n";
}

}  // namespace mlenv::plan
