// `mlenvc results` of a Slurm env: the results.json rank 0 of its recorded job wrote.
#include <filesystem>
#include <fstream>

#include "compiler/apply/records.h"
#include "compiler/plan/git_repo.h"
#include "targets/slurm/slurm_apply.h"
#include "targets/slurm/slurm_env.h"
#include "targets/slurm/slurm_jobs.h"

namespace mlenv::plan::day2 {

// On Slurm rank 0 writes results.json beside the job's logs (`mlenv-boot --results`,
// targets/slurm/sbatch.cc), in the env directory its last apply submitted from, for the job
// that apply recorded (`Slurm-Job:`).
std::optional<ResultsSource> SlurmDay2Driver::results(const PlanManifest& env,
                                                      const ResultsRequest&, Diagnostics&) const {
  const std::string unit = env.cluster + "/" + env.env;
  std::unique_ptr<Repository> repo = Repository::discover(std::filesystem::current_path().string());
  std::optional<ObjectId> record = repo->ref_target(applied_refs(false) + unit);
  std::string message = record ? repo->commit_message(*record) : "";
  // A destroy's record names no job: the apply record it followed does, and the job's files
  // stay on disk (compiler/apply/records.cc record_destroyed).
  if (record && slurm_trailer(message, kSlurmJobTrailer).empty()) {
    if (std::optional<ObjectId> applied = repo->first_parent(*record))
      message = repo->commit_message(*applied);
  }
  const std::string job = slurm_trailer(message, kSlurmJobTrailer);
  if (job.empty())
    return ResultsSource{std::nullopt, "`" + unit + "` has no submitted Slurm job recorded"};
  const std::string path = (std::filesystem::path(repo->workdir()) /
                            trailer(message, kPlanDirTrailer) / slurm::results_file(env.env, job))
                               .string();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return ResultsSource{std::nullopt, "Slurm job " + job + " has written no `" + path + "`"};
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!json.empty() && (json.back() == '\n' || json.back() == '\r')) json.pop_back();
  return ResultsSource{json, ""};
}

}  // namespace mlenv::plan::day2
