#!/usr/bin/env bash
# Everything that needs a GPU, in one run, on a machine with an NVIDIA GPU and CUDA:
#  1. builds mlenv-boot alone (as the emitted Dockerfile does), against NCCL;
#  2. runs the GPU test (what `ctest -L gpu` runs: runtime.nccl_check_gpu): the sweep, and the
#     localisation's per-node step through ncclCommSplit;
#  3. measures the host memory of a sweep larger than the GPU test's (its buffers are filled on
#     the device, so the resident size must stay far below max_bytes);
#  4. builds nccl-tests from the sources in $NCCL_TESTS_DIR (a copy of github.com/NVIDIA/nccl-tests)
#     and prints the all-reduce comparison from 8 B up (and torch's, where PyTorch is installed).
# Prints numbers (README.md "Speed" and runtime/README.md "Figures" record them).
# usage: NCCL_TESTS_DIR=/path/to/nccl-tests tests/bench/gpu_bench.sh [MAX_BYTES]  (default 1 GiB)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
max_bytes=${1:-1073741824}
build=${MLENV_GPU_BUILD:-/tmp/mlenv-gpu-build}
export PATH=/usr/local/cuda/bin:$PATH

nvidia-smi -L
gpus=$(nvidia-smi -L | wc -l)
# NCCL beside CUDA, else the one PyTorch's wheel ships (a versioned .so only: link through a
# folder of our own that adds the unversioned name).
if [ -z "${NCCL_HOME:-}" ] && [ ! -e /usr/local/cuda/include/nccl.h ]; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])')
  NCCL_HOME=$build/nccl
  mkdir -p "$NCCL_HOME/lib"
  ln -sfn "$wheel/include" "$NCCL_HOME/include"
  ln -sf "$wheel/lib/libnccl.so.2" "$NCCL_HOME/lib/libnccl.so.2"
  ln -sf libnccl.so.2 "$NCCL_HOME/lib/libnccl.so"
  export LD_LIBRARY_PATH=$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}
fi
export NCCL_HOME=${NCCL_HOME:-/usr/local/cuda}

echo "== build mlenv-boot"
cmake -S "$root/runtime" -B "$build/boot" -DCMAKE_BUILD_TYPE=Release -DMLENV_WERROR=ON |
  grep 'mlenv-boot:'
cmake --build "$build/boot" -j"$(nproc)" --target mlenv-boot >/dev/null
boot=$build/boot/mlenv-boot

echo "== the GPU test (ctest -L gpu: runtime.nccl_check_gpu): sweep and per-node step"
sh "$root/tests/runtime/nccl_check_gpu.sh" "$boot"

echo "== host memory of a $max_bytes-byte sweep (buffers filled on the device)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/boot.json" <<JSON
{"format_version": 3, "job": "bench/memory", "rank": {"env": "JOB_COMPLETION_INDEX"},
 "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": 29432},
 "nnodes": 1, "nproc_per_node": 1, "gpus_per_node": 1, "master_port": 29532,
 "transport": "tcp", "command": [], "services": [], "hostfile": "", "deepspeed_env": "",
 "nccl_check": {"min_busbw_gbps": 0, "max_bytes": $max_bytes, "timeout_s": 300}}
JSON
python3 - "$boot" "$work" "$max_bytes" <<'PY'
import resource, subprocess, sys
boot, work, max_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
subprocess.run([boot, "--config", f"{work}/boot.json", "--node-rank", "0", "--nccl-check",
                "--results", f"{work}/results.json"], check=True, stdout=subprocess.DEVNULL)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(f"peak resident memory {rss / 2**20:.0f} MiB for a sweep to {max_bytes / 2**20:.0f} MiB")
# Before the device fill the host held a buffer of max_bytes (33.7 GB for a 32 GiB sweep).
if max_bytes >= 1 << 30 and rss >= max_bytes:
    sys.exit("the sweep's buffer went through host memory")
PY

perf=()
if [ -n "${NCCL_TESTS_DIR:-}" ]; then
  echo "== build nccl-tests from $NCCL_TESTS_DIR"
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  make -C "$NCCL_TESTS_DIR" -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME="$NCCL_HOME" \
    NVCC_GENCODE="-gencode=arch=compute_${cap},code=sm_${cap}" BUILDDIR="$build/nccl-tests" \
    >"$build/nccl-tests.log" 2>&1 || { tail -30 "$build/nccl-tests.log"; exit 1; }
  perf=(--all-reduce-perf "$build/nccl-tests/all_reduce_perf")
else
  echo "NCCL_TESTS_DIR is not set: no nccl-tests comparison"
fi
echo "== all-reduce, size by size, from 8 B"
python3 "$root/tests/bench/allreduce_compare.py" "$boot" --max-bytes "$max_bytes" \
  --gpus "$gpus" "${perf[@]}"
