// `mlenvc build FILE -o DIR|-`: compile, render with a target, validate, write the output tree
// (or every object as one YAML stream on stdout, for `oc apply -f -`).

#include <yaml-cpp/yaml.h>
#include <iostream>

#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/output_writer.h"
#include "targets/common/openapi.h"
#include "targets/provider.h"
#include "targets/target.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc build FILE [-o DIR|-] [--openapi FILE]... "
    "[--format=text|json]\n";

// Validates every emitted object against the given OpenAPI documents (a cluster's own is
// `oc get --raw /openapi/v2`); objects of kinds no document defines are listed, not failed.
bool validate(const target::Output& output, const std::vector<std::string>& documents) {
  std::string error;
  const openapi::Validator* validator =
      openapi::cached_validator(documents, error, target::admission_rules());
  if (!validator) {
    std::cerr << "mlenvc build: " << error << '\n';
    return false;
  }
  bool ok = true;
  for (std::size_t i : output.stream) {
    const target::File& f = output.files[i];
    YAML::Node object = YAML::Load(f.content);
    std::string api_version = object["apiVersion"].as<std::string>("");
    std::string kind = object["kind"].as<std::string>("");
    if (!validator->knows(api_version, kind)) {
      std::cerr << "mlenvc build: note: " << f.path << ": no schema for " << api_version << ' '
                << kind << " in the given documents; not validated\n";
      continue;
    }
    for (const openapi::Issue& issue : validator->validate(object)) {
      std::cerr << "mlenvc build: " << f.path << ": " << issue.path << ": " << issue.message
                << '\n';
      ok = false;
    }
  }
  return ok;
}

// `-o -`: the rules first (what `check` runs), then each object written as it is rendered, so a
// fleet's stream is never held whole. A rule the render alone runs (one that guards the
// target's own objects) failing midway leaves the objects before it written, and exit 1.
int stream(Compilation& compilation, const target::Target& target, bool json) {
  if (compilation.program) target.check(*compilation.program, compilation.diagnostics);
  print_diagnostics(compilation, json);
  if (!compilation.program || compilation.diagnostics.has_errors()) return 1;
  Diagnostics rendered;  // the render repeats check's warnings: only its errors are new
  std::vector<std::string> notes = target.stream(
      *compilation.program, rendered,
      [](const target::File& object) { plan::write_stream_object(object, std::cout); });
  std::cout.flush();
  if (rendered.has_errors()) {
    compilation.diagnostics = std::move(rendered);
    print_diagnostics(compilation, json);
    return 1;
  }
  target::Output out;
  out.notes = std::move(notes);
  print_notes(out);
  return std::cout.good() ? 0 : 1;
}

}  // namespace

int run_build(const Args& args) {
  Options options = parse_options(args, {"help"}, {"o", "openapi", "format"});
  if (options.flag("help")) {
    std::cout << kUsage
              << "\nRenders every env of FILE with the target of its cluster's platform:\n"
                 "  -o DIR          write the output tree under DIR (<cluster>/<env>/...)\n"
                 "  -o -            write every object as one YAML stream to stdout\n"
                 "  --openapi FILE  validate every object strictly against an OpenAPI v2\n"
                 "                  document or CRD (repeatable), e.g. oc get --raw /openapi/v2\n"
                 "Exit status: 0 success, 1 errors.\n";
    return 0;
  }
  bool json = false;
  auto out_dir = options.value("o");
  auto documents = options.values["openapi"];
  if (!options.error.empty() || options.positional.size() != 1 || (!out_dir && documents.empty())) {
    std::cerr << "mlenvc build: "
              << (!options.error.empty()           ? options.error
                  : options.positional.size() != 1 ? "exactly one input file"
                                                   : "nothing to do: give -o DIR, -o - or "
                                                     "--openapi FILE")
              << '\n'
              << kUsage;
    return 1;
  }
  if (!json_format(options, json)) return 1;
  std::unique_ptr<target::Target> target = target::make_program_target();

  DiskFileSystem disk;
  auto compilation = compile(options.positional[0], disk);
  if (out_dir && *out_dir == "-" && documents.empty()) return stream(*compilation, *target, json);
  bool tree = out_dir && *out_dir != "-";
  std::optional<target::Output> rendered =
      render(*compilation, *target, tree ? target::Scope::Tree : target::Scope::Objects);
  print_diagnostics(*compilation, json);
  if (!rendered) return 1;
  const target::Output& output = *rendered;
  if (!documents.empty() && !validate(output, documents)) return 1;
  if (!out_dir) return 0;

  if (*out_dir == "-") {  // with --openapi: every object was validated before one is written
    plan::write_object_stream(output, std::cout);
  } else {
    std::string error = plan::write_output_tree(output, *out_dir);
    if (!error.empty()) {
      std::cerr << "mlenvc build: " << error << '\n';
      return 1;
    }
    std::cerr << "mlenvc build: wrote " << output.files.size() << " files under " << *out_dir
              << '\n';
  }
  print_notes(output);
  return std::cout.good() ? 0 : 1;
}

}  // namespace mlenv::driver
