#!/usr/bin/env bash
# Issue 31 item 3, for real: a local env of two nodes with 2 GPUs each on a machine of 4
# (`gpus.per_node`). apply starts each node as an mlenv-boot process whose GPUs are its own
# (CUDA_VISIBLE_DEVICES 0,1 on node 0 and 2,3 on node 1, as CUDA numbers them from 0 for each
# node's LOCAL_RANK 0 and 1), where every node used to see every GPU and two ranks shared a
# device. `debug = true` checks clean on local. Asking for more GPUs than the machine has is
# E0434. No GPU is touched: the workers only report what they were given.
# Usage: gpus.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE
set -euo pipefail
mlenvc=$1 boot=$2 template=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
sessions=()
cleanup() {
  for sid in "${sessions[@]}"; do pkill -KILL -s "$sid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
. "$here/../slurm/free_port.sh"
rdzv=$(free_port)
master=$(free_port)
while [ "$master" = "$rdzv" ]; do master=$(free_port); done
sed -e "s/@RDZV_PORT@/$rdzv/" -e "s/@MASTER_PORT@/$master/" "$template" >lab.mlenv
git add lab.mlenv && git commit -qm "a local env on 4 GPUs"
fail() { echo "FAIL: $*"; for f in plans/workstation/*/run/*.log; do echo "== $f"; cat "$f"; done; exit 1; }

"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; fail "plan failed"; }
grep -q '"debugpy_port": 5678' plans/workstation/split/boot.json || fail "no debugpy in boot.json"
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
for rank in 0 1; do sessions+=("$(cat "plans/workstation/split/run/rank-$rank.pid")"); done
for _ in $(seq 1 100); do
  "$mlenvc" status split >status.out 2>&1 || true
  [ "$(grep -c 'exited 0' status.out)" = 2 ] && break
  sleep 0.3
done
[ "$(grep -c 'exited 0' status.out)" = 2 ] || { cat status.out; fail "the nodes did not exit 0"; }
expected="0 0 0,1
0 1 0,1
1 0 2,3
1 1 2,3"
actual=$(cat plans/workstation/split/run/gpus-*.txt)
[ "$actual" = "$expected" ] || fail "the workers saw (node, local rank, devices): $actual"
echo "ok: node 0 has GPUs 0,1 and node 1 GPUs 2,3"

# Three nodes of 2 GPUs need 6 of the machine's 4: refused at check.
sed -i 's/nodes       = 2/nodes       = 3/' lab.mlenv
if "$mlenvc" check lab.mlenv >check.out 2>&1; then fail "3 nodes of 2 GPUs on 4 passed check"; fi
grep -q 'error\[E0434\]' check.out || { cat check.out; fail "no E0434"; }
echo "ok: 3 nodes of 2 GPUs on a machine of 4 is E0434"
