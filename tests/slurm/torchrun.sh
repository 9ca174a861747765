#!/usr/bin/env bash
# Run by cluster.sh: a real training job through mlenvc on the test cluster. `mlenvc plan` and
# `mlenvc apply --wait` of a CPU-only torchrun run: one mlenv-boot per node starts the real
# torchrun (Debian's python3-torch, with tests/runtime/torch/torchrun working around its
# Python 3.11 bug), four gloo workers train one DDP model across both nodes and end with the
# same weights; then `status`, `logs` and `destroy` of the finished job.
# Usage: cluster.sh torchrun.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE
set -euo pipefail
mlenvc=$1 boot=$2 template=$3
torch=$(cd "$(dirname "$0")/../runtime/torch" && pwd)
if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  echo "python3-torch is not installed (./mlenv deps python3-torch): skipped"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
repo=$MLENV_SLURM_DIR/torchrun
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost

. "$(dirname "$0")/free_port.sh"
rdzv=$(free_port)
master=$(free_port)
while [ "$master" = "$rdzv" ]; do master=$(free_port); done
sed -e "s/@RDZV_PORT@/$rdzv/" -e "s/@MASTER_PORT@/$master/" -e "s|@TRAIN@|$torch/train_ddp.py|" \
  "$template" >train.mlenv
git add train.mlenv && git commit -qm "a torchrun run on the test cluster"
"$mlenvc" plan train.mlenv >plan.out 2>&1 || { cat plan.out; fail "plan"; }
# The job runs on the hosts with the submitter's environment: this mlenv-boot, this torchrun.
export MLENV_BOOT=$boot PATH="$torch:$PATH" OMP_NUM_THREADS=1
envdir=plans/testlab/trainer
timeout 200 "$mlenvc" apply --wait >apply.out 2>&1 || {
  cat apply.out
  tail -n 40 "$envdir"/logs/*
  fail "apply --wait"
}
cat apply.out
id=$(sed -n 's/^Submitted testlab\/trainer as Slurm job \([0-9]*\)$/\1/p' apply.out)
[ -n "$id" ] || fail "apply printed no job id"

# Four workers, one world of 4, one model: the same weights everywhere, near y = 3x + 1.
weights=""
for rank in 0 1 2 3; do
  file=$envdir/trained-$rank.txt
  [ -f "$file" ] || { tail -n 40 "$envdir"/logs/*; fail "rank $rank did not train"; }
  read -r r world first last weight bias <"$file"
  [ "$r $world" = "$rank 4" ] || fail "rank $rank saw '$r $world'"
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a / 10) }' || fail "rank $rank: loss $first -> $last"
  weights="$weights $weight/$bias"
done
[ "$(echo $weights | tr ' ' '\n' | sort -u | wc -l)" = 1 ] || fail "the ranks' models differ:$weights"
echo "4 workers on 2 nodes trained one model:$weights"

# status of the finished job, its logs (both nodes' torchrun, labelled by rank), destroy.
"$mlenvc" status trainer >status.out 2>&1 || { cat status.out; fail "status"; }
cat status.out
grep -q "^testlab/trainer (Slurm job $id, run, 2 nodes)$" status.out || fail "status header"
grep -q 'COMPLETED' status.out || fail "status does not say COMPLETED"
"$mlenvc" logs trainer >logs.out 2>&1 || { cat logs.out; fail "logs"; }
grep -q '^\[0\] .*rank 0 of 4: loss' logs.out || { cat logs.out; fail "rank 0's training line"; }
grep -q '^\[1\] .*rank 3 of 4: loss' logs.out || { cat logs.out; fail "node 1's training line"; }
"$mlenvc" destroy trainer >destroy.out 2>&1 || { cat destroy.out; fail "destroy"; }
cat destroy.out
echo "plan, apply --wait, status, logs and destroy of a real torchrun job"
