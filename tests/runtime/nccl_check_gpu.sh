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
{"format_version": 3, "job": "test/gpu", "rank": {"env": "JOB_COMPLETION_INDEX"},
 "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": 29400},
 "nnodes": 1, "nproc_per_node": 1, "gpus_per_node": 1,
 "master_port": 29500, "transport": "tcp", "command": [],
 "services": [{"name": "marker", "argv": ["touch", "$dir/service-started"]}],
 "hostfile": "", "deepspeed_env": "",
 "nccl_check": {"min_busbw_gbps": 0, "max_bytes": 134217728, "timeout_s": 120}}
JSON
status=0
# An acceptance run: no command, so mlenv-boot exits with the check's verdict.
timeout 300 "$boot" --config "$dir/boot.json" --node-rank 0 --nccl-check \
  --results "$dir/results/gpu.json" > "$dir/stdout" || status=$?
cat "$dir/results/gpu.json"
[ "$status" -eq 0 ] || { echo "mlenv-boot --nccl-check exited $status"; exit 1; }
grep -q '"status": "passed"' "$dir/results/gpu.json"
grep -q '"bytes": 134217728' "$dir/results/gpu.json"
# One rank: algbw > 0 and busbw exactly 0, as nccl-tests reports for n=1.
grep -q '"busbw_gbps": 0' "$dir/results/gpu.json"
if grep -q '"wrong": [1-9]' "$dir/results/gpu.json"; then echo "wrong values"; exit 1; fi
# An acceptance run starts nothing after the check, services included.
if [ -e "$dir/service-started" ]; then echo "a service was started"; exit 1; fi
# The same document on one stdout line, for `mlenvc results`.
grep -q '^MLENV_RESULTS {"format_version":2,.*"status":"passed"' "$dir/stdout" \
  || { echo "no MLENV_RESULTS line"; cat "$dir/stdout"; exit 1; }

# The per-node step of the localisation on this GPU: `diagnose` runs it after a passing sweep,
# through a sub-communicator split from the world one (ncclCommSplit).
sed 's/"timeout_s": 120}/"timeout_s": 120, "diagnose": true}/' "$dir/boot.json" > "$dir/diag.json"
status=0
timeout 300 "$boot" --config "$dir/diag.json" --node-rank 0 --nccl-check \
  --results "$dir/results/diag.json" > "$dir/diag.out" || status=$?
cat "$dir/results/diag.json"
[ "$status" -eq 0 ] || { echo "mlenv-boot --nccl-check with diagnose exited $status"; exit 1; }
python3 - "$dir/results/diag.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format_version"] == 2 and doc["localised"], doc
(node,) = doc["nodes"]
# One rank: the step's figure is its algbw, which a working GPU makes far above 0.
assert node["node"] == 0 and node["error"] == "" and node["busbw_gbps"] > 1, node
assert doc["suspects"] == [] and doc["status"] == "passed", doc
print(f"per-node step: {node['busbw_gbps']:.1f} GB/s in {doc['steps'][0]['seconds']:.2f} s")
PY
echo "single-GPU sweep and per-node step passed"
