#!/usr/bin/env bash
# Real torchrun, real gloo (issue 19): two mlenv-boot nodes on loopback, two workers each, and
# every worker joins one process group of world size 4 and all-reduces its rank + 1 (sum 10).
#   torchrun: boot.json's command is `torchrun allreduce.py`; mlenv-boot adds --nnodes,
#             --node_rank, --master_addr, --master_port and --nproc_per_node, and torchrun
#             starts the workers (torch/distributed/run.py, static rendezvous on MASTER_PORT).
#   workers:  boot.json's command is the worker program; mlenv-boot starts nproc_per_node of
#             them with torchrun's environment and init_process_group("gloo") reads it (env://).
#   wrapped:  (issue 31 item 6) `env TEST_MARK=kept python3 -m torch.distributed.run`, with
#             `launcher_words` 5 as mlenvc emits it: the node arguments go after the module, the
#             `env` prefix stays, and every worker sees TEST_MARK.
#   launch:   `python3 -m torch.distributed.launch`, the deprecated front of the same launcher.
# Debian's python3-torch (1.13, CPU) and its /usr/bin/python3; torch/torchrun works around its
# Python 3.11 packaging bug (see there). Skipped (77) only where python3-torch is absent:
# `./mlenv test` installs it.
set -u
boot=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/python_test.sh"
require torch.distributed python3-torch

# run_job MODE COMMAND_JSON LAUNCHER [LAUNCHER_WORDS [MARK]]: two nodes, then the four workers'
# reports, each ending in MARK when one is given.
run_job() {
  local mode=$1 command=$2 launcher=$3 words=${4:-} mark=${5:-}
  local out="$dir/$mode" rdzv master
  rdzv=$(free_port)
  master=$(free_port)
  while [ "$master" = "$rdzv" ]; do master=$(free_port); done
  mkdir -p "$out"
  local words_key=""
  [ -z "$words" ] || words_key="\"launcher_words\": $words,"
  cat >"$out/boot.json" <<JSON
{
  "format_version": 3,
  "job": "test/$mode",
  "rank": {"env": "TEST_NODE_RANK"},
  "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": $rdzv},
  "nnodes": 2,
  "nproc_per_node": 2,
  "gpus_per_node": 0,
  "master_port": $master,
  "transport": "tcp",
  "tcp": {"interfaces": []},
  "timeouts": {"discovery_s": 60, "rendezvous_s": 60, "heartbeat_s": 1, "grace_s": 5},
  "command": $command,
  "launcher": "$launcher",
  $words_key
  "services": [],
  "hostfile": "",
  "deepspeed_env": "",
  "shell_env": "",
  "network_status": "",
  "nccl_check": {"min_busbw_gbps": 0, "max_bytes": 1048576}
}
JSON
  local pids=() rank
  for rank in 0 1; do
    env PATH="$here/torch:/usr/bin:/bin" PYTHONPATH="$here/torch/site" OUT_DIR="$out" \
      TEST_NODE_RANK=$rank \
      MLENV_JOB_TOKEN="torchrun-test-$mode" OMP_NUM_THREADS=1 \
      timeout 120 "$boot" --config "$out/boot.json" >"$out/node$rank.log" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for rank in 0 1; do
    if ! wait "${pids[$rank]}"; then
      echo "FAIL ($mode): node $rank exited non-zero; its log:"
      cat "$out/node$rank.log"
      failed=1
    fi
  done
  [ $failed = 0 ] || return 1
  # Each worker: its rank, the world size 4, the all-reduced sum 1+2+3+4 = 10, its local rank.
  local expected="0 4 10 0$mark
1 4 10 1$mark
2 4 10 0$mark
3 4 10 1$mark"
  local actual
  actual=$(cat "$out"/rank-*.txt 2>/dev/null)
  if [ "$actual" != "$expected" ]; then
    echo "FAIL ($mode): the workers reported"
    echo "$actual"
    cat "$out"/node*.log
    return 1
  fi
  echo "ok ($mode): 4 workers on 2 nodes joined one gloo group, all-reduce = 10"
}

status=0
run_job torchrun "[\"torchrun\", \"$here/torch/allreduce.py\"]" torchrun || status=1
run_job workers "[\"$python\", \"$here/torch/allreduce.py\"]" "" || status=1
run_job wrapped "[\"env\", \"TEST_MARK=kept\", \"$python\", \"-m\", \"torch.distributed.run\",
  \"$here/torch/allreduce.py\"]" torchrun 5 " kept" || status=1
run_job launch "[\"$python\", \"-m\", \"torch.distributed.launch\", \"$here/torch/allreduce.py\"]" \
  torchrun 3 || status=1
exit $status
