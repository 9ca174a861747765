#include "compiler/apply/results.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>

#include "compiler/day2/day2_driver.h"
#include "compiler/diag/render.h"
#include "compiler/plan/git_repo.h"
#include "targets/common/plan_json.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace {

constexpr std::string_view kMarker = "MLENV_RESULTS ";

template <typename T>
T value_or(const YAML::Node& node, const char* key, T fallback) {
  const YAML::Node value = node[key];
  return value && value.IsScalar() ? value.as<T>() : fallback;
}

// A size as nccl-tests prints it: bytes, K, M or G (binary units).
std::string size_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G"};
  int unit = 0;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f%s", bytes, kUnits[unit]);
  return buffer;
}

std::string fixed(double value, int width) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%*.2f", width, value);
  return buffer;
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// Left-aligned in `width` columns, with one space at least after it.
std::string left(const std::string& text, std::size_t width) {
  return text.size() + 1 >= width ? text + ' ' : text + std::string(width - text.size(), ' ');
}

// The committed plan.json of `env` (`ENV` or `CLUSTER/ENV`) at HEAD; E0715 when there is not
// exactly one.
std::optional<PlanManifest> find_env(const std::string& env, Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = Repository::discover(std::filesystem::current_path().string());
  Head head;
  if (repo) head = repo->head();
  if (!repo || !head.commit) {
    diagnostics.report(Code::E0601, {}, "no git repository with a commit contains `.`",
                       "run `mlenvc results` in the checkout that holds the plans");
    return std::nullopt;
  }
  PlanTree tree = repo->plan_tree(repo->commit_tree(*head.commit));
  const std::string suffix = "/" + env + "/plan.json";
  std::vector<PlanManifest> found;
  for (const auto& [path, entry] : tree.entries()) {
    if (!path.ends_with(suffix) && path != env + "/plan.json") continue;
    std::string error;
    std::optional<PlanManifest> manifest = parse_plan_json(*tree.read(path), error);
    if (manifest && (manifest->env == env || manifest->cluster + "/" + manifest->env == env))
      found.push_back(std::move(*manifest));
  }
  if (found.size() == 1) return std::move(found[0]);
  Diagnostic& d = diagnostics.report(
      Code::E0715, {},
      found.empty() ? "no committed plan has env `" + printable(env) + "`"
                    : "env `" + printable(env) + "` is planned on more than one cluster",
      found.empty() ? "name it as in `plans/<cluster>/<env>`" : "name it as CLUSTER/ENV");
  for (const PlanManifest& manifest : found)
    d.notes.push_back({"`" + manifest.cluster + "/" + manifest.env + "`", {}});
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_results_line(std::string_view log) {
  std::optional<std::string> out;
  std::size_t at = 0;
  while (at < log.size()) {
    std::size_t end = log.find('\n', at);
    std::string_view line = log.substr(at, end == std::string_view::npos ? log.npos : end - at);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with(kMarker)) out = std::string(line.substr(kMarker.size()));
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return out;
}

std::optional<RunResults> parse_results(const std::string& json, std::string& error) {
  try {
    const YAML::Node root = YAML::Load(json);
    if (!root.IsMap()) throw std::runtime_error("not a JSON object");
    const int version = value_or(root, "format_version", 0);
    if (version != 1 && version != 2) throw std::runtime_error("unknown format_version");
    RunResults out;
    out.job = value_or<std::string>(root, "job", "");
    out.status = value_or<std::string>(root, "status", "");
    if (out.status != "passed" && out.status != "failed" && out.status != "error")
      throw std::runtime_error("unknown status `" + printable(out.status) + "`");
    out.error = value_or<std::string>(root, "error", "");
    out.transport = value_or<std::string>(root, "transport", "");
    out.nccl_version = value_or<std::string>(root, "nccl_version", "");
    out.world_size = value_or(root, "world_size", 0);
    out.nnodes = value_or(root, "nnodes", 0);
    out.total_time_s = value_or(root, "total_time_s", 0.0);
    out.min_busbw_gbps = value_or(root, "min_busbw_gbps", 0.0);
    out.avg_busbw_gbps = value_or(root, "avg_busbw_gbps", 0.0);
    if (const YAML::Node rows = root["rows"]; rows && rows.IsSequence()) {
      for (const YAML::Node& row : rows) {
        out.rows.push_back({value_or(row, "bytes", 0.0), value_or(row, "time_us", 0.0),
                            value_or(row, "algbw_gbps", 0.0), value_or(row, "busbw_gbps", 0.0)});
      }
    }
    out.localised = value_or(root, "localised", false);
    std::vector<std::string> hosts;
    if (const YAML::Node list = root["hosts"]; list && list.IsSequence()) {
      for (const YAML::Node& host : list)
        hosts.push_back(host.IsScalar() ? host.as<std::string>() : "");
    }
    if (const YAML::Node suspects = root["suspects"]; suspects && suspects.IsSequence()) {
      for (const YAML::Node& entry : suspects) {
        ResultSuspect suspect;
        suspect.node = value_or(entry, "node", 0);
        suspect.partner = value_or(entry, "partner", -1);  // null: not a link
        if (suspect.node >= 0 && static_cast<std::size_t>(suspect.node) < hosts.size())
          suspect.host = hosts[static_cast<std::size_t>(suspect.node)];
        suspect.rail = value_or<std::string>(entry, "rail", "");
        suspect.reason = value_or<std::string>(entry, "reason", "");
        suspect.measured_gbps = value_or(entry, "measured_gbps", 0.0);
        suspect.expected_gbps = value_or(entry, "expected_gbps", 0.0);
        suspect.check = value_or<std::string>(entry, "check", "");
        out.suspects.push_back(std::move(suspect));
      }
    }
    return out;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

void print_results(std::ostream& out, const RunResults& results) {
  out << printable(results.job) << ": ";
  // world_size is the GPUs the self-test was to use; with no row it measured none (it could not
  // start: no GPU, no NCCL), so the header says that rather than a GPU count no test saw.
  if (results.rows.empty()) {
    out << "no GPU measured on " << results.nnodes << (results.nnodes == 1 ? " node" : " nodes")
        << ": the NCCL self-test did not run";
  } else {
    out << results.world_size << " GPUs on " << results.nnodes << " nodes";
  }
  if (!results.transport.empty()) out << ", " << printable(results.transport);
  if (!results.nccl_version.empty()) out << ", NCCL " << printable(results.nccl_version);
  out << '\n';
  out << padded("size", 10) << padded("time (us)", 14) << padded("algbw (GB/s)", 14)
      << padded("busbw (GB/s)", 14) << '\n';
  for (const ResultRow& row : results.rows) {
    out << padded(size_text(row.bytes), 10) << fixed(row.time_us, 14) << fixed(row.algbw_gbps, 14)
        << fixed(row.busbw_gbps, 14) << '\n';
  }
  out << "average busbw: " << fixed(results.avg_busbw_gbps, 0) << " GB/s\n";
  out << "threshold:     " << fixed(results.min_busbw_gbps, 0) << " GB/s\n";
  if (results.status == "error") {
    out << "ERROR: " << printable(results.error) << '\n';
  } else {
    out << (results.status == "passed" ? "PASSED" : "FAILED") << '\n';
  }
  if (results.suspects.empty()) {
    if (results.localised && results.status != "passed")
      out << "no single suspect: every node, pair and rail measured alike\n";
    return;
  }
  out << "\nsuspects:\n"
      << "  " << left("node", 24) << left("rail", 10) << padded("measured", 10)
      << padded("expected", 10) << "  what to check\n";
  for (const ResultSuspect& suspect : results.suspects) {
    std::string node = std::to_string(suspect.node);
    if (suspect.partner >= 0) node += "-" + std::to_string(suspect.partner);
    if (!suspect.host.empty()) node += " (" + suspect.host + ")";
    out << "  " << left(printable(node), 24)
        << left(printable(suspect.rail.empty() ? "-" : suspect.rail), 10)
        << fixed(suspect.measured_gbps, 10) << fixed(suspect.expected_gbps, 10) << "  "
        << printable(suspect.reason) << ": " << printable(suspect.check) << '\n';
  }
  out << "(GB/s bus bandwidth; a node pair such as 12-13 is the link between them)\n";
}

int show_results(const ResultsRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  std::optional<PlanManifest> env = find_env(request.env, diagnostics);
  if (!env) return 1;
  if (env->env_kind != "acceptance") {
    // Only an acceptance run's rank 0 writes a result (mlenv-boot --nccl-check); any other
    // env would be "no result yet" for ever.
    diagnostics.report(Code::E0716, {},
                       "`" + env->cluster + "/" + env->env + "` is a " + env->env_kind +
                           " env, not an acceptance run: it has no result",
                       "read its output with `mlenvc logs " + env->env + "`");
    return 1;
  }
  std::optional<ResultsSource> found =
      target::provider(env->platform).day2().results(*env, request, diagnostics);
  if (!found) return 1;
  const std::string unit = env->cluster + "/" + env->env;
  if (!found->json) {
    Diagnostic& d = diagnostics.report(Code::E0716, {}, "no result of `" + unit + "` yet",
                                       "the run has not finished, or its pods are gone");
    d.notes.push_back({found->note, {}});
    return 1;
  }
  const std::string& line = *found->json;
  std::string error;
  std::optional<RunResults> results = parse_results(line, error);
  if (!results) {
    diagnostics.report(Code::E0716, {}, "the result of `" + unit + "` is unreadable: " + error,
                       "mlenv-boot writes format_version 1 or 2");
    return 1;
  }
  if (request.json) {
    out << printable(line, true) << '\n';  // results.json is pretty-printed on Slurm
  } else {
    print_results(out, *results);
  }
  if (results->status == "passed") return 0;
  return results->suspects.empty() ? 1 : kResultsFailedWithSuspects;
}

}  // namespace mlenv::plan
