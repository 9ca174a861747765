#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, CUDA and PyTorch: builds mlenv-boot alone (as the emitted
# Dockerfile does), runs the GPU test (what `ctest -L gpu` runs), then compares the self-test's
# all-reduce with torch.distributed.all_reduce and, where NCCL_TESTS_DIR holds nccl-tests'
# sources, with its all_reduce_perf. Prints numbers; see README.md "Speed".
# usage: tests/bench/gpu_bench.sh [MAX_BYTES]   (default 1 GiB)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
max_bytes=${1:-1073741824}
build=${MLENV_GPU_BUILD:-/tmp/mlenv-gpu-build}
export PATH=/usr/local/cuda/bin:$PATH

nvidia-smi -L
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

cmake -S "$root/runtime" -B "$build/boot" -DCMAKE_BUILD_TYPE=Release -DMLENV_WERROR=ON |
  grep 'mlenv-boot:'
cmake --build "$build/boot" -j"$(nproc)" --target mlenv-boot >/dev/null
boot=$build/boot/mlenv-boot

echo "== the GPU test (ctest -L gpu: runtime.nccl_check_gpu)"
sh "$root/tests/runtime/nccl_check_gpu.sh" "$boot"

perf=()
if [ -n "${NCCL_TESTS_DIR:-}" ]; then
  make -C "$NCCL_TESTS_DIR" -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME="$NCCL_HOME" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$build/nccl-tests" >/dev/null
  perf=(--all-reduce-perf "$build/nccl-tests/all_reduce_perf")
fi
echo "== all-reduce, size by size"
python3 "$root/tests/bench/allreduce_compare.py" "$boot" --max-bytes "$max_bytes" \
  --gpus "$(nvidia-smi -L | wc -l)" "${perf[@]}"
