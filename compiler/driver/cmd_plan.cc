// `mlenvc plan FILE`: render, diff against the plan committed at HEAD, commit the plan directory.

#include <filesystem>
#include <iostream>
#include <sstream>

#include "compiler/base/file_system.h"
#include "compiler/base/git_source.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/plan_session.h"
#include "compiler/plan/summary.h"
#include "compiler/plan/summary_markdown.h"
#include "targets/target.h"

namespace mlenv::driver {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: mlenvc plan FILE [--out DIR] [--no-commit] [--check] [--detailed-exitcode]\n"
    "                        [--format=text|json|markdown]\n"
    "\n"
    "Renders FILE into the plan directory (default: plans/ at the root of the repository),\n"
    "prints what changed since the plan committed at HEAD, and commits the plan directory,\n"
    "and nothing else, on the current branch.\n"
    "\n"
    "  --out DIR            the plan directory, inside the work tree\n"
    "  --no-commit          write the plan into the work tree only\n"
    "  --check              exit 1 when the committed plan differs from a fresh render\n"
    "  --detailed-exitcode  exit 0 without changes, 2 with changes, 1 on error\n"
    "  --format=json        print the summary as one JSON object\n"
    "  --format=markdown    print the summary as Markdown for a pull-request comment\n"
    "\n"
    "A source file that differs from HEAD (or is not committed) is named in a warning: the\n"
    "pull request's plan would not match its source.\n";

struct PlanArgs {
  std::string file;
  std::string out;
  bool commit = true;
  bool check = false;
  bool detailed = false;
  bool json = false;
  bool markdown = false;
};

// Reads the arguments with the parser every subcommand shares (`--out DIR` and `--out=DIR`
// alike); nullopt after printing the usage (for --help) or an error.
std::optional<PlanArgs> parse(const Args& args, int& status) {
  Options options = parse_options(args, {"help", "h", "no-commit", "check", "detailed-exitcode"},
                                  {"out", "format"});
  status = 0;
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return std::nullopt;
  }
  status = 1;
  if (!options.error.empty() || options.positional.size() != 1) {
    std::cerr << "mlenvc plan: "
              << (options.error.empty() ? std::string("name one FILE") : options.error) << '\n'
              << kUsage;
    return std::nullopt;
  }
  PlanArgs parsed;
  parsed.markdown = options.value("format") == "markdown";
  if (!parsed.markdown && !json_format(options, parsed.json)) return std::nullopt;
  parsed.file = options.positional[0];
  parsed.out = options.value("out").value_or("");
  parsed.commit = !options.flag("no-commit");
  parsed.check = options.flag("check");
  parsed.detailed = options.flag("detailed-exitcode");
  return parsed;
}

void print(const Diagnostics& diagnostics, bool json) {
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) {
    if (json) {
      render_json(std::cerr, none, d);
    } else {
      render_text(std::cerr, none, d);
    }
  }
}

// What a render read from the work tree: path (relative to it) and bytes.
using SourceFiles = std::vector<std::pair<std::string, std::string>>;

// Compiles and renders `source` from the work tree root, so plan.json's `source` and every
// input path are relative to the repository whatever directory plan was run in. `read` gets
// the files it read from the work tree (the stdlib, the schema and the site library are not
// the repository's: check records the site's as `MLENV_PATH/...`).
std::optional<target::Output> render(const std::string& workdir, const std::string& source,
                                     bool json, SourceFiles& read) {
  fs::path cwd = fs::current_path();
  fs::current_path(workdir);
  DiskFileSystem disk;
  std::unique_ptr<Compilation> compilation = compile(source, disk);
  std::optional<target::Output> output =
      driver::render(*compilation, *target::make_program_target());
  fs::current_path(cwd);
  print_diagnostics(*compilation, json);
  if (compilation->program) {
    for (const ir::InputFile& input : compilation->program->inputs) {
      if (!input.path.starts_with("std/") && !input.path.starts_with("schema/") &&
          !input.path.starts_with("MLENV_PATH/") && !is_git_source(input.path))
        read.emplace_back(normalize_path(input.path), input.text);
    }
  }
  return output;
}

std::string commit_message(const std::string& source, const std::string& prefix,
                           const plan::PlanDiff& diff) {
  std::ostringstream body;
  plan::render_summary_text(body, diff);
  std::string line = plan::summary_line(diff);
  std::ostringstream message;
  message << "mlenvc plan " << printable(source) << ": " << line.substr(6, line.size() - 7)
          << "\n\nSource: " << printable(source) << "\nPlan-Directory: " << printable(prefix)
          << "\n\n"
          << body.str();
  return message.str();
}

// A JSON array of strings.
std::string json_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "\"" : ",\"") + json_escape(items[i]) + "\"";
  return out + "]";
}

// What every output format says besides the diff.
struct PlanReport {
  std::string source;
  std::optional<plan::ObjectId> commit;
  std::vector<plan::SinceApplied> since;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> note_details;
};

// Every note before grouping: {"subject": "<cluster>/<env>" or "", "text": ...}.
std::string json_note_details(const std::vector<std::pair<std::string, std::string>>& notes) {
  std::string out = "[";
  for (std::size_t i = 0; i < notes.size(); ++i) {
    out += (i == 0 ? "{\"subject\":\"" : ",{\"subject\":\"") + json_escape(notes[i].first) +
           "\",\"text\":\"" + json_escape(notes[i].second) + "\"}";
  }
  return out + "]";
}

void print_json(const plan::PlanDiff& diff, const PlanReport& report) {
  std::vector<std::string> since;
  for (const plan::SinceApplied& env : report.since) since.push_back(env.unit);
  std::ostringstream extra;
  extra << "\"committed\":" << (report.commit ? "true" : "false") << ",\"commit\":"
        << (report.commit ? "\"" + plan::to_hex(*report.commit) + "\"" : std::string("null"))
        << ",\"changed_since_apply\":" << json_strings(since)
        << ",\"warnings\":" << json_strings(report.warnings)
        << ",\"notes\":" << json_strings(report.notes)
        << ",\"note_details\":" << json_note_details(report.note_details);
  plan::render_summary_json(std::cout, diff, extra.str());
}

void print_markdown(const plan::PlanDiff& diff, const PlanReport& report) {
  plan::MarkdownContext context{report.source, report.warnings, report.notes,
                                report.commit ? plan::to_hex(*report.commit) : ""};
  plan::render_summary_markdown(std::cout, diff, context);
}

void print_text(const plan::PlanDiff& diff, const PlanReport& report, const std::string& prefix,
                const target::Output& output) {
  plan::render_summary_text(std::cout, diff);
  for (const plan::SinceApplied& env : report.since) {
    std::cout << "\nSince the last apply of " << env.unit << " (refs/mlenv/applied/" << env.unit
              << "):\n";
    for (const plan::Change& change : env.diff.changes) {
      std::cout << "  " << plan::action_name(change.action) << ' ' << printable(change.address)
                << '\n';
    }
    for (const plan::FileChange& file : env.diff.files) {
      std::cout << "  " << plan::action_name(file.action) << ' ' << printable(file.path) << '\n';
    }
  }
  if (report.commit) {
    std::cout << "\nCommitted " << plan::to_hex(*report.commit).substr(0, 12)
              << " with the plan in " << prefix << ".\n";
  } else if (!diff.empty()) {
    std::cout << "\nWrote the plan to " << prefix << " (not committed).\n";
  }
  print_notes(output);
}

// --check: exit 1 (E0606) when the committed plan differs from the fresh render.
int check_only(const plan::PlanDiff& diff, const PlanArgs& args, const std::string& prefix,
               const std::string& source, Diagnostics& diagnostics) {
  if (args.json) {
    plan::render_summary_json(std::cout, diff,
                              "\"stale\":" + std::string(diff.empty() ? "false" : "true"));
  } else if (!diff.empty()) {
    plan::render_summary_text(std::cout, diff);
  }
  if (diff.empty()) {
    if (!args.json) std::cout << "The committed plan in " << prefix << " is up to date.\n";
    return 0;
  }
  plan::report_stale_check(prefix, source, diagnostics);
  print(diagnostics, args.json);
  return 1;
}

// The root file as plan.json records it: relative to the work tree. One outside it is refused
// (E0605): its plan could not be committed with it, and its path is the user's disk.
std::optional<std::string> source_path(const fs::path& workdir, const std::string& given,
                                       Diagnostics& diagnostics) {
  std::error_code error;  // a name the system refuses (over NAME_MAX) is reported, not thrown
  fs::path file = fs::weakly_canonical(fs::absolute(given, error), error);
  std::string source = file.lexically_relative(workdir).generic_string();
  if (error) {
    diagnostics.report(Code::E0201, {},
                       "cannot read `" + printable(given) + "`: " + error.message());
    return std::nullopt;
  }
  if (source.empty() || source.starts_with("..")) {
    diagnostics.report(Code::E0605, {},
                       "the source `" + printable(given) + "` is outside the work tree",
                       "plan a file of the repository that holds the plan");
    return std::nullopt;
  }
  return source;
}

}  // namespace

int run_plan(const Args& args) {
  int status = 0;
  std::optional<PlanArgs> parsed = parse(args, status);
  if (!parsed) return status;
  Diagnostics diagnostics;
  std::unique_ptr<plan::PlanSession> session = plan::PlanSession::open(parsed->out, diagnostics);
  if (!session) {
    print(diagnostics, parsed->json);
    return 1;
  }
  fs::path workdir = fs::weakly_canonical(session->workdir());
  PlanReport report;
  std::optional<std::string> source = source_path(workdir, parsed->file, diagnostics);
  if (!source) {
    print(diagnostics, parsed->json);
    return 1;
  }
  report.source = *source;
  SourceFiles read;
  std::optional<target::Output> output =
      render(workdir.string(), report.source, parsed->json, read);
  if (!output) return 1;
  std::optional<plan::PlanDiff> diff =
      session->diff(plan::tree_from_files(std::move(output->files)), report.source, diagnostics);
  if (!diff) {
    print(diagnostics, parsed->json);
    return 1;
  }
  if (parsed->check)
    return check_only(*diff, *parsed, session->prefix(), report.source, diagnostics);
  report.warnings = session->warn_uncommitted(read, diagnostics);
  if (parsed->commit && !diff->empty()) {
    report.commit =
        session->commit(commit_message(report.source, session->prefix(), *diff), diagnostics);
    if (!report.commit) {
      print(diagnostics, parsed->json);
      return 1;
    }
  }
  if (!session->write_worktree(report.commit.has_value(), diagnostics)) {
    print(diagnostics, parsed->json);
    return 1;
  }
  print(diagnostics, parsed->json);  // the warnings
  report.since = session->since_applied();
  report.notes = output->notes;
  report.note_details = output->note_details;
  if (parsed->json) {
    print_json(*diff, report);
  } else if (parsed->markdown) {
    print_markdown(*diff, report);
  } else {
    print_text(*diff, report, session->prefix(), *output);
  }
  if (parsed->detailed) return diff->empty() ? 0 : 2;
  return 0;
}

}  // namespace mlenv::driver
