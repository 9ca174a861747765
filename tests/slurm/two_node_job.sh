#!/usr/bin/env bash
# Run by cluster.sh: a plain two-node batch job runs one task on each node, so the cluster
# itself works before any generated script is blamed.
set -euo pipefail
cd "$MLENV_SLURM_DIR"
cat >job.sh <<'JOB'
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1
srun bash -c 'echo "$SLURMD_NODENAME" >"node.$SLURM_NODEID"'
JOB
sbatch --wait --output=job.out job.sh
[ "$(cat node.0)" = n1 ] || { echo "rank 0 ran on '$(cat node.0)', not n1"; exit 1; }
[ "$(cat node.1)" = n2 ] || { echo "rank 1 ran on '$(cat node.1)', not n2"; exit 1; }
echo "two-node job ran on n1 and n2"
