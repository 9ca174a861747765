#!/usr/bin/env bash
# Run by cluster.sh: `mlenvc plan` then `mlenvc apply --wait` of a Slurm env on the test
# cluster: apply submits with sbatch, records the job id with the applied plan, waits for the
# job, and both ranks' commands ran. Then a partition the cluster lacks: sbatch refuses, apply
# fails with E0730 and records nothing.
# Usage: cluster.sh apply.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE EXPECTED_E0730
set -euo pipefail
mlenvc=$1 boot=$2 template=$3 expected=$4
repo=$MLENV_SLURM_DIR/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost

. "$(dirname "$0")/free_port.sh"
rdzv=$(free_port)
master=$(free_port)
while [ "$master" = "$rdzv" ]; do master=$(free_port); done
sed -e "s/@RDZV_PORT@/$rdzv/" -e "s/@MASTER_PORT@/$master/" "$template" >ranks.mlenv
git add ranks.mlenv && git commit -qm "ranks on the test cluster"
"$mlenvc" plan ranks.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
export MLENV_BOOT=$boot
"$mlenvc" apply --wait >apply.out 2>&1 || { cat apply.out; tail -n 30 plans/testlab/ranks/logs/*; exit 1; }
cat apply.out
id=$(sed -n 's/^Submitted testlab\/ranks as Slurm job \([0-9]*\)$/\1/p' apply.out)
[ -n "$id" ] || { echo "apply printed no job id"; exit 1; }
git log -1 --format=%B refs/mlenv/applied/testlab/ranks | grep -qx "Slurm-Job: $id" || {
  echo "the applied record does not name job $id:"
  git log -1 --format=%B refs/mlenv/applied/testlab/ranks
  exit 1
}
for rank in 0 1; do
  [ -f "plans/testlab/ranks/rank-$rank.txt" ] || { echo "rank $rank did not run"; exit 1; }
done
[ -f "plans/testlab/ranks/logs/ranks-$id.out" ] || { echo "no job log"; exit 1; }
# The job ran the copy of boot.json apply checked (named by its blob id), with the run's own
# token: the script made one, srun handed it to both ranks, and they met.
blob=$(git rev-parse HEAD:plans/testlab/ranks/boot.json)
cmp "plans/testlab/ranks/logs/.applied/boot-$blob.json" <(git show "$blob") ||
  { echo "apply left no copy of the boot.json it checked"; exit 1; }

# A partition the cluster does not have: sbatch refuses, apply says so, nothing is recorded.
rm -f plans/testlab/ranks/rank-*.txt
sed -i 's/partition = "test"/partition = "nope"/' ranks.mlenv
git commit -qam "a partition the cluster lacks"
"$mlenvc" plan ranks.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
if "$mlenvc" apply >apply.out 2>&1; then
  echo "apply succeeded with an unknown partition"
  exit 1
fi
grep -F "$(cat "$expected")" apply.out >/dev/null || {
  echo "expected: $(cat "$expected")"
  cat apply.out
  exit 1
}
git log -1 --format=%B refs/mlenv/applied/testlab/ranks | grep -qx "Slurm-Job: $id" || {
  echo "a refused submission changed the record"
  exit 1
}
echo "apply submitted job $id, waited for it, recorded it; an unknown partition is E0730"
