#!/bin/sh
# The single-GPU NCCL sweep: runs only where an NVIDIA GPU is present, and reports itself skipped
# (exit 77, ctest SKIP_RETURN_CODE) elsewhere instead of passing.
# usage: nccl_check_gpu.sh MLENV_BOOT
set -eu
boot="$1"
if [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no NVIDIA GPU on this machine: skipped"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/boot.json" <<JSON
{"format_version": 2, "job": "test/gpu", "workload": "gpu", "headless_service": "gpu-h",
 "namespace": "ns", "nnodes": 1, "nproc_per_node": 1, "gpus_per_node": 1,
 "rdzv_port": 29400, "master_port": 29500, "transport": "tcp", "command": [], "services": [],
 "hostfile": "", "deepspeed_env": "",
 "nccl_check": {"min_busbw_gbps": 0, "max_bytes": 134217728, "timeout_s": 120}}
JSON
status=0
timeout 300 "$boot" --config "$dir/boot.json" --node-rank 0 --nccl-check \
  --results "$dir/results.json" || status=$?
cat "$dir/results.json"
[ "$status" -eq 0 ] || { echo "mlenv-boot --nccl-check exited $status"; exit 1; }
grep -q '"status": "pass"' "$dir/results.json"
grep -q '"bytes": 134217728' "$dir/results.json"
# One rank: algbw > 0 and busbw exactly 0, as nccl-tests reports for n=1.
grep -q '"busbw_GBps": 0' "$dir/results.json"
if grep -q '"wrong": [1-9]' "$dir/results.json"; then echo "wrong values"; exit 1; fi
echo "single-GPU sweep passed"
