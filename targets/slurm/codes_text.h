#pragma once
// The paragraphs about Slurm in the explanations of codes other platforms report too:
// compiler/diag/codes_*.def splice them in (MLENV_TARGETS_<CODE>, generated), so that the core's
// registry names no sbatch or srun. A macro of adjacent literals, since a directive cannot hold a
// raw string of several lines.

/// E0755: what a Slurm env offers instead of sync, port-forward and urls.
#define MLENV_SLURM_E0755                                                                         \
  "\nAn env of a `platform = slurm` cluster runs as one Slurm job of the nodes' own processes:\n" \
  "`mlenvc status`, `logs`, `shell` and `results` ask Slurm about it (squeue, sacct, srun and\n"  \
  "the job's files). On Slurm, mlenvc runs on a host of the cluster, which sees the shared\n"     \
  "file system the job uses: copy into the cluster's `workspace_dir` (the job's /workspace)\n"    \
  "with rsync or cp, and reach a tool on rank 0's node (`mlenvc status ENV` names it) with\n"     \
  "`ssh -L PORT:localhost:PORT NODE`.\n"
