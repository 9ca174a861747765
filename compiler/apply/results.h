#pragma once
// `mlenvc results ENV`: the result of an acceptance run, as rank 0 of its Job printed it on one
// log line, `MLENV_RESULTS <json>` (results.json, format_version 1 or 2, written by mlenv-boot;
// runtime/README.md describes both).

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diag/diagnostic.h"

namespace mlenv::plan {

/// One message size of the NCCL self-test, as nccl-tests prints it.
struct ResultRow {
  double bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

/// What the localisation named: a node, a node's rail, or the link to `partner`.
struct ResultSuspect {
  int node = 0;
  int partner = -1;  ///< >= 0: the link between node and partner
  std::string host;  ///< the node's address, when results.json lists the hosts
  std::string rail;
  std::string reason;
  double measured_gbps = 0;
  double expected_gbps = 0;
  std::string check;
};

/// The parts of results.json that `mlenvc results` shows.
struct RunResults {
  std::string job;
  std::string status;  ///< "passed", "failed" or "error"
  std::string error;
  std::string transport;
  std::string nccl_version;
  int world_size = 0;
  int nnodes = 0;
  double total_time_s = 0;
  double min_busbw_gbps = 0;
  double avg_busbw_gbps = 0;
  std::vector<ResultRow> rows;
  bool localised = false;  ///< format 2: the localisation ran
  std::vector<ResultSuspect> suspects;
};

/// `mlenvc results`' exit status for a failed run with suspects named; a failed run with none
/// (the whole cluster slow alike, or an error) exits 1, a passed one 0.
inline constexpr int kResultsFailedWithSuspects = 2;

/// The JSON of the last `MLENV_RESULTS ` line in a log, or nullopt when there is none.
std::optional<std::string> find_results_line(std::string_view log);

/// Parses results.json; on failure returns nullopt and says why in `error`.
std::optional<RunResults> parse_results(const std::string& json, std::string& error);

/// The table: one row per size (size, time, algbw, busbw), the average busbw, the threshold and
/// PASSED or FAILED (or the error), then the suspects (node, rail, measured, expected, what to
/// check) when the localisation ran.
void print_results(std::ostream& out, const RunResults& results);

/// What `mlenvc results` was asked.
struct ResultsRequest {
  std::string env;     ///< `ENV` or `CLUSTER/ENV`
  std::string client;  ///< --kubectl PATH; "" for the platform's client on PATH (platform_client)
  bool json = false;   ///< print the document instead of the table
  int timeout_seconds = 60;
  std::string context = {};  ///< --context NAME for every oc/kubectl call; "" for none
};

/// Where a provider's day-2 driver looked for a result (Day2Driver::results).
struct ResultsSource {
  std::optional<std::string> json;  ///< results.json's text, when rank 0 has written it
  std::string note;  ///< when there is no result: the command or file tried and what it gave
};

/// Finds the env in the plans committed at HEAD, asks its provider's day-2 driver for rank 0's
/// result and prints it.
/// Returns 0 passed, kResultsFailedWithSuspects failed with suspects, 1 failed with no single
/// suspect, an error, or refused (E0715 no such env, E0716 no result yet).
int show_results(const ResultsRequest& request, std::ostream& out, Diagnostics& diagnostics);

}  // namespace mlenv::plan
