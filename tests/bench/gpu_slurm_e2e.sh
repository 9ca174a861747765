#!/usr/bin/env bash
# On a GPU machine (CUDA and NCCL under /usr/local/cuda, PyTorch for python3): the Slurm path
# end to end on one node, as issue 19 asks. `mlenvc build` of a Slurm program; mlenv-boot
# built from the emitted _runtime/ (as a site builds it for host envs); then the generated
# batch scripts run with one-node `srun` and `scontrol` stand-ins (Slurm itself is not needed):
#   accept       an acceptance run with no bar: passes, results.json says so, exit 0
#   accept-high  the same below an impossible bar: fails with its verdict, exit 1
#   launcher     torchrun trains a DDP model over NCCL on every GPU (`torchrun ddp_nccl.py`)
#   workers      the same as a worker program (mlenv-boot starts one python per GPU)
# then times the launcher env against plain torchrun (median of 3). Prints what it checks and
# exits non-zero on the first failure.
# usage: tests/bench/gpu_slurm_e2e.sh MLENVC
#        tests/bench/gpu_slurm_e2e.sh --render DIR MLENVC   (no GPU needed: only `mlenvc build`)
#        tests/bench/gpu_slurm_e2e.sh --tree DIR            (on the GPU machine, no mlenvc there)
# The GPU machine may lack mlenvc's libraries: render there what it will run with --render
# where mlenvc is built, naming the GPU machine's python3, GPU count and checkout in
# MLENV_E2E_PYTHON, MLENV_E2E_GPUS and MLENV_E2E_ROOT, then run the tree with --tree.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${MLENV_E2E_DIR:-/tmp/mlenv-gpu-slurm-e2e}
fail() { echo "FAIL: $*" >&2; exit 1; }
mode=build tree=""
case "${1:-}" in
  --render) mode=render tree=$(realpath -m "$2") mlenvc=$(realpath "$3") ;;
  --tree) mode=tree tree=$(realpath "$2") ;;
  *) mlenvc=$(realpath "$1") ;;
esac
if [ "$mode" = render ]; then
  gpus=${MLENV_E2E_GPUS:?the GPU count of the GPU machine}
  python=${MLENV_E2E_PYTHON:?the python3 of the GPU machine}
  root=${MLENV_E2E_ROOT:-$root}
else
  export PATH=/usr/local/cuda/bin:$PATH
  export NCCL_HOME=${NCCL_HOME:-/usr/local/cuda}
  gpus=$(nvidia-smi -L | wc -l)
  [ "$gpus" -gt 0 ] || { echo "no GPU"; exit 1; }
  python=$(command -v python3)
  "$python" -c 'import torch; assert torch.cuda.is_available()'
  torchrun=$(dirname "$python")/torchrun
  [ -x "$torchrun" ] || torchrun="$python -m torch.distributed.run"
fi
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work"

# The stand-ins: `srun [options] PROGRAM ARGS...` runs PROGRAM as node 0 of a one-node job;
# `scontrol show hostnames` names this node and `scontrol show node` gives it NodeAddr 127.0.0.1.
cat >bin/srun <<'SH'
#!/usr/bin/env bash
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
export SLURM_NODEID=0 SLURM_PROCID=0 SLURM_LOCALID=0
exec "$@"
SH
cat >bin/scontrol <<'SH'
#!/usr/bin/env bash
case "$1 $2" in
  "show hostnames") echo "$3" ;;
  "show node") echo "NodeName=$3 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=$3" ;;
  *) echo "scontrol stand-in: $*" >&2; exit 1 ;;
esac
SH
chmod +x bin/srun bin/scontrol

# One node of every GPU; host envs (no image), so mlenv-boot is the one built below.
cat >e2e.mlenv <<MLENV
cluster gpu {
  platform  = slurm
  api       = "localhost"
  partition = "gpu"
  gpus {
    per_node = $gpus
    resource = "nvidia.com/gpu"
  }
}

env accept {
  cluster = gpu
  nodes   = 1
  gpus    = $gpus
  network = tcp
  acceptance { min_busbw_gbps = 0, max_bytes = 256Mi }
}

env accept-high {
  cluster = gpu
  nodes   = 1
  gpus    = $gpus
  network = tcp
  acceptance { min_busbw_gbps = 100000, max_bytes = 256Mi }
}

env launcher {
  cluster = gpu
  nodes   = 1
  gpus    = $gpus
  network = tcp
  command = ["torchrun", "$root/tests/bench/ddp_nccl.py"]
}

env workers {
  cluster = gpu
  nodes   = 1
  gpus    = $gpus
  network = tcp
  command = ["$python", "$root/tests/bench/ddp_nccl.py"]
}
MLENV
if [ "$mode" = tree ]; then
  cp -r "$tree" out
else
  "$mlenvc" build e2e.mlenv -o out >build.log 2>&1 || { cat build.log; fail "mlenvc build"; }
fi
if [ "$mode" = render ]; then
  rm -rf "$tree" && cp -r out "$tree" && echo "rendered into $tree" && exit 0
fi

echo "== mlenv-boot from the emitted _runtime/"
cmake -S out/_runtime -B boot -DCMAKE_BUILD_TYPE=Release >boot-cmake.log 2>&1 ||
  { cat boot-cmake.log; fail "cmake of _runtime/"; }
grep 'mlenv-boot:' boot-cmake.log || true
cmake --build boot -j"$(nproc)" --target mlenv-boot >boot-build.log 2>&1 ||
  { tail -n 40 boot-build.log; fail "building mlenv-boot"; }
export MLENV_BOOT=$work/boot/mlenv-boot

# run_env ENV JOB_ID: the env's script as Slurm would run it, in its directory; its exit code.
run_env() {
  local env=$1 id=$2 code=0
  (
    cd "out/gpu/$env"
    mkdir -p logs
    PATH="$work/bin:$(dirname "$python"):$PATH" SLURM_JOB_NODELIST=$(hostname -s) \
      SLURM_JOB_ID=$id SLURM_JOB_NAME=$env SLURM_CPUS_ON_NODE=$(nproc) \
      timeout 600 bash "$env.sbatch" >"logs/$env-$id.out" 2>"logs/$env-$id.err"
  ) || code=$?
  echo "$code"
}

echo "== acceptance run, no bar"
code=$(run_env accept 101)
results=out/gpu/accept/logs/accept-101.results.json
[ "$code" = 0 ] || { tail -n 30 out/gpu/accept/logs/*; fail "accept exited $code"; }
grep -q '"status": "passed"' "$results" || { cat "$results"; fail "accept did not pass"; }
echo "passed: $(grep -c '"bytes"' "$results") sizes, results in $results"

echo "== acceptance run below its bar"
code=$(run_env accept-high 102)
results=out/gpu/accept-high/logs/accept-high-102.results.json
[ "$code" = 1 ] || { tail -n 30 out/gpu/accept-high/logs/*; fail "accept-high exited $code, not 1"; }
grep -q '"status": "failed"' "$results" || { cat "$results"; fail "no failed verdict"; }
grep -h 'MLENV_RESULTS' out/gpu/accept-high/logs/accept-high-102.out | cut -c1-200

for env in launcher workers; do
  echo "== $env: DDP over NCCL on $gpus GPUs"
  code=$(run_env "$env" 103)
  [ "$code" = 0 ] || { tail -n 40 "out/gpu/$env"/logs/*; fail "$env exited $code"; }
  n=$(grep -c 'weights equal on every rank: True' "out/gpu/$env/logs/$env-103.out" || true)
  [ "$n" = "$gpus" ] || { tail -n 40 "out/gpu/$env"/logs/*; fail "$env: $n of $gpus ranks agree"; }
  grep 'rank 0 of' "out/gpu/$env/logs/$env-103.out"
done

echo "== time: mlenv-boot + torchrun against plain torchrun (median of 3, seconds)"
median() { sort -n | sed -n 2p; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", b - a }'; }
through_boot=$(for i in 1 2 3; do
  t0=$(now)
  [ "$(run_env launcher "2$i")" = 0 ] || fail "timed launcher run $i"
  elapsed "$t0" "$(now)"
done | median)
plain=$(for i in 1 2 3; do
  t0=$(now)
  $torchrun --nnodes=1 --nproc_per_node="$gpus" --master_addr=127.0.0.1 --master_port=29511 \
    "$root/tests/bench/ddp_nccl.py" >/dev/null 2>&1 || fail "plain torchrun run $i"
  elapsed "$t0" "$(now)"
done | median)
echo "mlenv-boot with torchrun: $through_boot s; plain torchrun: $plain s"
echo "all passed on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1) x $gpus"
