// `mlenvc plan FILE`: render, diff against the plan committed at HEAD, commit the plan directory.

#include <filesystem>
#include <iostream>
#include <sstream>

#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/plan_session.h"
#include "compiler/plan/summary.h"
#include "targets/target.h"

namespace mlenv::driver {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: mlenvc plan FILE [--out DIR] [--no-commit] [--check] [--detailed-exitcode]\n"
    "                        [--format=text|json]\n"
    "\n"
    "Renders FILE into the plan directory (default: plans/ at the root of the repository),\n"
    "prints what changed since the plan committed at HEAD, and commits the plan directory,\n"
    "and nothing else, on the current branch.\n"
    "\n"
    "  --out DIR            the plan directory, inside the work tree\n"
    "  --no-commit          write the plan into the work tree only\n"
    "  --check              exit 1 when the committed plan differs from a fresh render\n"
    "  --detailed-exitcode  exit 0 without changes, 2 with changes, 1 on error\n"
    "  --format=json        print the summary as one JSON object\n";

struct PlanArgs {
  std::string file;
  std::string out;
  bool commit = true;
  bool check = false;
  bool detailed = false;
  bool json = false;
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
  if (!json_format(options, parsed.json)) return std::nullopt;
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

// Compiles and renders `source` from the work tree root, so plan.json's `source` and every
// input path are relative to the repository whatever directory plan was run in.
std::optional<target::Output> render(const std::string& workdir, const std::string& source,
                                     bool json) {
  fs::path cwd = fs::current_path();
  fs::current_path(workdir);
  DiskFileSystem disk;
  std::unique_ptr<Compilation> compilation = compile(source, disk);
  std::optional<target::Output> output =
      driver::render(*compilation, *target::make_program_target());
  fs::current_path(cwd);
  print_diagnostics(*compilation, json);
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
  fs::path file = fs::weakly_canonical(fs::absolute(parsed->file));
  std::string source = file.lexically_relative(workdir).generic_string();
  if (source.empty() || source.starts_with("..")) source = file.string();

  std::optional<target::Output> output = render(workdir.string(), source, parsed->json);
  if (!output) return 1;
  std::optional<plan::PlanDiff> diff =
      session->diff(plan::tree_from_output(*output), source, diagnostics);
  if (!diff) {
    print(diagnostics, parsed->json);
    return 1;
  }

  if (parsed->check) {
    if (parsed->json) {
      plan::render_summary_json(std::cout, *diff,
                                "\"stale\":" + std::string(diff->empty() ? "false" : "true"));
    } else if (!diff->empty()) {
      plan::render_summary_text(std::cout, *diff);
    }
    if (diff->empty()) {
      if (!parsed->json)
        std::cout << "The committed plan in " << session->prefix() << " is up to date.\n";
      return 0;
    }
    plan::report_stale_check(session->prefix(), source, diagnostics);
    print(diagnostics, parsed->json);
    return 1;
  }

  std::optional<plan::ObjectId> commit;
  if (parsed->commit && !diff->empty()) {
    commit = session->commit(commit_message(source, session->prefix(), *diff), diagnostics);
    if (!commit) {
      print(diagnostics, parsed->json);
      return 1;
    }
  }
  if (!session->write_worktree(commit.has_value(), diagnostics)) {
    print(diagnostics, parsed->json);
    return 1;
  }
  std::vector<plan::SinceApplied> since = session->since_applied();
  if (parsed->json) {
    std::ostringstream extra;
    extra << "\"committed\":" << (commit ? "true" : "false")
          << ",\"commit\":" << (commit ? "\"" + plan::to_hex(*commit) + "\"" : std::string("null"))
          << ",\"changed_since_apply\":[";
    for (std::size_t i = 0; i < since.size(); ++i) {
      extra << (i == 0 ? "" : ",") << "\"" << json_escape(since[i].unit) << "\"";
    }
    extra << "],\"notes\":[";
    for (std::size_t i = 0; i < output->notes.size(); ++i) {
      extra << (i == 0 ? "" : ",") << "\"" << json_escape(output->notes[i]) << "\"";
    }
    extra << "]";
    plan::render_summary_json(std::cout, *diff, extra.str());
  } else {
    plan::render_summary_text(std::cout, *diff);
    for (const plan::SinceApplied& env : since) {
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
    if (commit) {
      std::cout << "\nCommitted " << plan::to_hex(*commit).substr(0, 12) << " with the plan in "
                << session->prefix() << ".\n";
    } else if (!diff->empty()) {
      std::cout << "\nWrote the plan to " << session->prefix() << " (not committed).\n";
    }
    print_notes(*output);
  }
  if (parsed->detailed) return diff->empty() ? 0 : 2;
  return 0;
}

}  // namespace mlenv::driver
