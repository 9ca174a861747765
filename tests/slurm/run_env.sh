#!/usr/bin/env bash
# Run by cluster.sh (#13.10): a CPU-only env's generated batch script runs on the two-node test
# cluster with `sbatch --wait`; one mlenv-boot per node meets the other through the rendezvous
# at rank 0's NodeAddr, and every rank's command writes what it saw.
# Usage: cluster.sh run_env.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE
# The template's @RDZV_PORT@ and @MASTER_PORT@ become free ports, so runs do not collide.
set -euo pipefail
mlenvc=$1 boot=$2 template=$3
cd "$MLENV_SLURM_DIR"

. "$(dirname "$0")/free_port.sh"
rdzv=$(free_port)
master=$(free_port)
while [ "$master" = "$rdzv" ]; do master=$(free_port); done
sed -e "s/@RDZV_PORT@/$rdzv/" -e "s/@MASTER_PORT@/$master/" "$template" >program.mlenv
"$mlenvc" build program.mlenv -o out

envdir=out/testlab/ranks
[ -f "$envdir/ranks.sbatch" ] || { echo "no $envdir/ranks.sbatch"; ls -R out; exit 1; }
# Hosts run the mlenv-boot this project built (the script's documented MLENV_BOOT).
export MLENV_BOOT=$boot
# Bounded below ctest's timeout, so that a job that never ends shows its logs.
(cd "$envdir" && timeout 120 sbatch --wait ranks.sbatch) || {
  echo "the job failed or did not end within 120 s; its logs:"
  tail -n 50 "$envdir"/logs/*
  exit 1
}

fail=0
for rank in 0 1; do
  file=$envdir/rank-$rank.txt
  if [ ! -f "$file" ]; then
    echo "rank $rank wrote nothing"
    fail=1
    continue
  fi
  # RANK WORLD_SIZE NODE_RANK MASTER_ADDR MASTER_PORT, as the command saw them.
  read -r r world node addr port <"$file"
  expected="$rank 2 $rank 127.0.0.1 $master"
  if [ "$r $world $node $addr $port" != "$expected" ]; then
    echo "rank $rank saw '$r $world $node $addr $port', expected '$expected'"
    fail=1
  fi
done
if [ "$fail" -ne 0 ]; then
  tail -n 50 "$envdir"/logs/*
  exit 1
fi
echo "both ranks ran: $(cat "$envdir"/rank-*.txt | tr '\n' ';')"
