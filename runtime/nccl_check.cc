#include "nccl_check.h"

#include <unistd.h>

#include <ctime>

#include "collective.h"
#include "exit_code.h"
#include "log.h"
#include "signals.h"
#include "util.h"

namespace boot {

double algorithm_bandwidth(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / 1e9 / seconds : 0;
}

double allreduce_busbw(double algbw_gbps, int nranks) {
  if (nranks <= 1) return 0;
  return algbw_gbps * 2.0 * (nranks - 1) / nranks;
}

double average_busbw(const std::vector<SweepRow>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const SweepRow& row : rows) sum += row.busbw_gbps;
  return sum / static_cast<double>(rows.size());
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t max_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 8; bytes <= max_bytes; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

SweepVerdict judge_sweep(const std::vector<SweepRow>& rows, double min_busbw_gbps) {
  std::uint64_t wrong = 0;
  for (const SweepRow& row : rows) wrong += row.wrong;
  if (wrong > 0) return {"failed", std::to_string(wrong) + " wrong values"};
  double average = average_busbw(rows);
  if (average < min_busbw_gbps) {
    return {"failed", "average busbw " + std::to_string(average) + " GB/s is below the threshold " +
                          std::to_string(min_busbw_gbps) + " GB/s"};
  }
  return {"passed", ""};
}

int verdict_exit_code(const SweepVerdict& verdict) {
  if (verdict.status == "passed") return kExitOk;
  if (verdict.status == "failed") return kExitNcclCheckFailed;
  return kExitNcclCheckError;
}

Json results_to_json(const NcclCheckRequest& request, const std::vector<SweepRow>& rows,
                     const SweepVerdict& verdict, const std::string& nccl_version,
                     const CheckTimes& times, const Localisation& localisation) {
  Json table = Json::array();
  for (const SweepRow& row : rows) {
    // nccl-tests' columns: size, count, type, redop, time, algbw, busbw, #wrong.
    Json entry = Json::object();
    entry.set("bytes", static_cast<std::int64_t>(row.bytes))
        .set("count", static_cast<std::int64_t>(row.count))
        .set("type", "float")
        .set("op", "sum")
        .set("time_us", row.time_us)
        .set("algbw_gbps", row.algbw_gbps)
        .set("busbw_gbps", row.busbw_gbps)
        .set("wrong", static_cast<std::int64_t>(row.wrong));
    table.push(std::move(entry));
  }
  Json out = Json::object();
  out.set("format_version", 2)
      .set("job", request.job)
      .set("status", verdict.status)
      .set("error", verdict.error)
      .set("world_size", request.nnodes * request.nproc_per_node)
      .set("nnodes", request.nnodes)
      .set("nproc_per_node", request.nproc_per_node)
      .set("transport", request.transport)
      .set("nccl_version", nccl_version)
      .set("started_at", times.started_at)
      .set("finished_at", times.finished_at)
      .set("total_time_s", times.total_time_s)
      .set("min_busbw_gbps", request.min_busbw_gbps)
      .set("avg_busbw_gbps", average_busbw(rows))
      .set("rows", std::move(table))
      .set("env", to_json(request.nccl_env));
  Json hosts = Json::array();
  for (const std::string& host : request.hosts) hosts.push(host);
  out.set("hosts", std::move(hosts));
  Json localised = localisation_to_json(localisation);
  for (const auto& [key, value] : localised.as_object()) out.set(key, value);
  return out;
}

std::string results_line(const Json& results) {
  return "MLENV_RESULTS " + results.dump();
}

void publish_results(const Json& results, const std::string& path) {
  if (!path.empty() && (!make_parent_dirs(path) || !write_file_atomic(path, results.pretty()))) {
    log_warning("cannot write " + path);
  }
  std::string line = results_line(results) + "\n";
  ssize_t ignored = ::write(STDOUT_FILENO, line.data(), line.size());
  (void)ignored;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm parts;
  ::gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

bool should_localise(const SweepVerdict& verdict, bool diagnose) {
  return verdict.status != "error" && (diagnose || verdict.status == "failed");
}

namespace {

std::unique_ptr<Collective> make_collective(const NcclCheckRequest& request) {
  if (request.simulate_model.empty())
    return make_nccl_collective(
        hcas_of(request.nccl_env.count("NCCL_IB_HCA") ? request.nccl_env.at("NCCL_IB_HCA") : ""));
  std::optional<std::string> text = read_file(request.simulate_model);
  if (!text)
    throw BootError(kExitConfigError, "cannot read the cluster model " + request.simulate_model);
  JsonParseResult model = parse_json(*text);
  if (!model.value)
    throw BootError(kExitConfigError, "the cluster model is not JSON: " + model.error);
  log_warning(std::string("simulating the collective (") + kSimulateVariable + "): for tests only");
  return make_simulated_collective(*model.value, request.node_rank, request.nnodes);
}

// Ends the world communicator; a failure there changes no verdict, so it is only logged.
void finish(Collective& collective) {
  try {
    collective.finish(time_after(Clock::now(), 30));
  } catch (const BootError& failure) {
    if (failure.code() >= 128) throw;
    log_warning(failure.what());
  }
}

// A verdict that passed on figures still fails when the localisation named someone.
void fail_on_suspects(SweepVerdict& verdict, const Localisation& localisation) {
  if (verdict.status != "passed" || localisation.suspects.empty()) return;
  verdict = {"failed", std::to_string(localisation.suspects.size()) + " suspect(s) named"};
}

}  // namespace

int run_nccl_check(const NcclCheckRequest& request, NodeLinks& links) {
  CheckTimes times;
  times.started_at = utc_now();
  Clock::time_point started = Clock::now();
  Clock::time_point deadline = time_after(started, request.timeout_s);
  std::unique_ptr<Collective> collective = make_collective(request);
  std::vector<SweepRow> rows;
  SweepVerdict verdict;
  Localisation localisation;
  try {
    rows = collective->sweep(request, deadline);
    verdict = judge_sweep(rows, request.min_busbw_gbps);
  } catch (const BootError& failure) {
    if (failure.code() >= 128) throw;  // told to stop: that is not a test result
    verdict = {"error", failure.what()};
  }
  if (request.node_rank != 0) {
    // A member follows rank 0's steps; rank 0's verdict is the job's.
    double wait_s = request.timeout_s + 2 * request.step_timeout_s + 10;
    int code = request.nnodes > 1 ? follow_steps(*collective, *links.rank0, wait_s)
                                  : verdict_exit_code(verdict);
    if (verdict.status != "error") finish(*collective);
    return code;
  }
  // Members that died during the sweep are the suspects; the others cannot measure without them.
  localisation.suspects =
      await_members(links, request.nnodes, request.timeout_s + request.step_timeout_s + 10);
  if (!localisation.suspects.empty()) {
    localisation.ran = true;
    verdict = {"failed", "node(s) lost during the sweep"};
  } else if (should_localise(verdict, request.diagnose)) {
    localisation =
        localise(*collective, links, request.nnodes, request.step_bytes, request.step_timeout_s);
    fail_on_suspects(verdict, localisation);
    if (verdict.status == "passed" && localisation.suspects.empty()) {
      log_info("localisation: no suspect");
    }
  }
  int code = verdict_exit_code(verdict);
  end_steps(links, code);
  if (verdict.status != "error") finish(*collective);
  times.finished_at = utc_now();
  times.total_time_s = std::chrono::duration<double>(Clock::now() - started).count();
  publish_results(
      results_to_json(request, rows, verdict, collective->version(), times, localisation),
      request.results_path);
  if (verdict.status != "passed") {
    log_error("nccl check " + verdict.status + ": " + verdict.error);
    return code;
  }
  log_info("nccl check passed: " + std::to_string(rows.size()) + " sizes, avg busbw " +
           std::to_string(average_busbw(rows)) + " GB/s");
  return kExitOk;
}

}  // namespace boot
