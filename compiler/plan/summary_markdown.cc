#include "compiler/plan/summary_markdown.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "compiler/diag/render.h"
#include "compiler/plan/summary.h"

namespace mlenv::plan {
namespace {

// The longest run of backticks in `text`.
std::size_t backtick_run(const std::string& text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// `text` as a CommonMark code span: delimited by more backticks than it holds, so no value can
// end the span and become Markdown or HTML.
std::string code(const std::string& text) {
  std::string shown = printable(text);
  std::string fence(backtick_run(shown) + 1, '`');
  bool pad = !shown.empty() && (shown.front() == '`' || shown.back() == '`');
  return fence + (pad ? " " : "") + shown + (pad ? " " : "") + fence;
}

// A fenced `diff` block holding `text`, fenced by more backticks than any line holds.
std::string block(const std::string& text) {
  std::string fence(std::max<std::size_t>(3, backtick_run(text) + 1), '`');
  return fence + "diff\n" + text + fence + "\n";
}

// The env (or `_admin`, `_shared`) section a change belongs to: its first two segments.
std::string section_of(const std::string& path) {
  std::size_t first = path.find('/');
  std::size_t second = first == std::string::npos ? first : path.find('/', first + 1);
  if (path.starts_with("_") || second == std::string::npos) return "";
  return path.substr(0, second);
}

struct Section {
  std::vector<const Change*> changes;
  std::vector<const FileChange*> files;
};

std::string counts(const std::vector<const Change*>& changes) {
  std::size_t n[5] = {0, 0, 0, 0, 0};
  for (const Change* change : changes) ++n[static_cast<int>(change->action)];
  return std::to_string(n[0]) + " to create, " + std::to_string(n[1]) + " to update, " +
         std::to_string(n[2]) + " to replace, " + std::to_string(n[3]) + " to delete" +
         (n[4] == 0 ? "" : ", " + std::to_string(n[4]) + " to keep");
}

void render_section(std::ostream& out, const std::string& name, const Section& section) {
  out << "\n### " << (name.empty() ? std::string("Files beside the envs") : code(name)) << "\n";
  if (!section.changes.empty()) out << "\n" << counts(section.changes) << ".\n";
  bool listed = false;
  for (const Change* change : section.changes) {
    const std::string flag = required_flag(*change);
    if (flag.empty()) continue;
    if (change->action == Action::Keep) {
      out << (listed ? "" : "\n") << "- " << code(change->address) << " is kept with its data; "
          << code(flag) << " deletes it\n";
    } else {
      out << (listed ? "" : "\n") << "- :warning: " << code(change->address) << ' '
          << protection(*change) << ": apply needs " << code(flag) << "\n";
    }
    listed = true;
  }
  std::ostringstream text;
  for (const Change* change : section.changes) render_change_text(text, *change);
  for (const FileChange* file : section.files) render_file_text(text, *file);
  std::size_t items = section.changes.size() + section.files.size();
  out << "\n<details><summary>" << items << (items == 1 ? " change" : " changes")
      << "</summary>\n\n"
      << block(text.str()) << "\n</details>\n";
}

}  // namespace

void render_summary_markdown(std::ostream& out, const PlanDiff& diff,
                             const MarkdownContext& context) {
  out << "## mlenvc plan " << code(context.source) << "\n\n**" << summary_line(diff) << "**\n";
  if (!context.commit.empty()) out << "\nCommitted as " << code(context.commit) << ".\n";
  for (const std::string& warning : context.warnings)
    out << "\n> [!WARNING]\n> " << printable(warning) << "\n";
  const std::size_t losses = data_losses(diff);
  if (losses != 0) {
    out << "\n> [!CAUTION]\n> " << losses << (losses == 1 ? " object holds" : " objects hold")
        << " data that this plan would destroy; apply refuses without `--allow-destroy`.\n";
  }
  if (diff.empty()) out << "\nNo changes: the plan matches the committed plan.\n";
  std::map<std::string, Section> sections;
  for (const Change& change : diff.changes)
    sections[section_of(change.address)].changes.push_back(&change);
  for (const FileChange& file : diff.files) sections[section_of(file.path)].files.push_back(&file);
  for (const auto& [name, section] : sections) render_section(out, name, section);
  if (diff.inputs_changed != 0) {
    out << "\nInput digests changed in " << diff.inputs_changed << " plan.json "
        << (diff.inputs_changed == 1 ? "file" : "files") << " with no object change.\n";
  }
  if (diff.shared_copies != 0) {
    out << "\nShared objects: " << diff.shared_copies << " env "
        << (diff.shared_copies == 1 ? "copy" : "copies")
        << " came or went with their envs; the objects stay as they are.\n";
  }
  if (!context.notes.empty()) {
    out << "\n### Notes\n\n";
    for (const std::string& note : context.notes) out << "- " << printable(note) << "\n";
  }
}

}  // namespace mlenv::plan
