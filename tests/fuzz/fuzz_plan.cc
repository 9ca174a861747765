// What mlenvc reads back from outside (tests/fuzz/README.md): plan.json and the program's
// `_inputs/` file as committed, the trailers of `refs/mlenv/applied/...` records, the clients'
// replies (`get pods/routes/builds -o json`, squeue, sacct, sbatch --parsable), and what a run
// writes back (mlenv-boot's status, an acceptance run's results line in its log). Any input must
// give an answer or a reported error: a crash, a sanitizer report, a timeout or running out of
// memory is a bug.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "compiler/apply/record_values.h"
#include "compiler/apply/records.h"
#include "compiler/apply/results.h"
#include "targets/common/plan_json.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/local/local_drivers.h"
#include "targets/openshift/day2/builds.h"
#include "targets/openshift/day2/routes.h"
#include "targets/slurm/slurm_apply.h"
#include "targets/slurm/slurm_jobs.h"

using namespace mlenv::plan;

namespace {

void require(bool holds) {
  if (!holds) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  // Whatever plan.json reads, the model writes as a plan.json that reads again.
  if (std::optional<PlanManifest> plan = parse_plan_json(text, error))
    require(parse_plan_json(write_plan_json(*plan), error).has_value());
  (void)parse_program_inputs(text, error);
  // A trailer is read back only as a value mlenvc writes, whatever the record holds.
  for (std::string_view key : {kPlanDirTrailer, kRuntimeTrailer, kParentTrailer}) {
    std::string value = trailer(text, key);
    require(value.empty() || valid_trailer_value(key, value));
    require(value.empty() || value.front() != '-');
  }
  // A provider's own trailers, read back by the provider.
  const std::string job = slurm_trailer(text, kSlurmJobTrailer);
  require(job.empty() || is_slurm_job_id(job));
  for (int sid : recorded_session_ids(text)) require(sid >= 2);
  if (auto pods = day2::parse_rank_pods(text, "env", error)) {
    for (const day2::RankPod& pod : *pods) require(is_object_name(pod.name));
  }
  (void)day2::parse_routes(text, error);
  (void)day2::parse_latest_build(text, error);
  (void)day2::parse_boot_status(text, error);
  (void)day2::parse_queued(text);
  (void)parse_results(text, error);
  if (auto line = find_results_line(text)) (void)parse_results(*line, error);
  (void)slurm::parse_squeue(text);
  (void)slurm::parse_sacct(text);
  if (auto id = slurm::parse_job_id(text)) require(is_slurm_job_id(*id));
  return 0;
}
