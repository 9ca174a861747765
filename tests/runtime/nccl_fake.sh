#!/bin/sh
# The NCCL backend's host logic, without a GPU: an mlenv-boot linked against the host-only fake
# of CUDA and NCCL (fake_nccl/fake_nccl.cc), which keeps NCCL's non-blocking contract: a call on
# a communicator whose last operation is still in progress is refused (NCCL src/init.cc,
# ncclCommEnsureReady). Three ranks on one node, as on a node of several GPUs.
# usage: nccl_fake.sh MLENV_BOOT_FAKE_NCCL
set -eu
boot="$1"
export MLENV_FAKE_GPUS=3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
config() {  # config FILE TIMEOUT_S DIAGNOSE
  cat > "$1" <<JSON
{"format_version": 3, "job": "test/fake-nccl", "rank": {"env": "JOB_COMPLETION_INDEX"},
 "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": 29400},
 "nnodes": 1, "nproc_per_node": 3, "gpus_per_node": 3,
 "master_port": 29500, "transport": "tcp", "command": [], "services": [],
 "hostfile": "", "deepspeed_env": "",
 "nccl_check": {"min_busbw_gbps": 0, "max_bytes": 1048576, "timeout_s": $2, "diagnose": $3}}
JSON
}
run() {  # run NAME: mlenv-boot --nccl-check with $dir/NAME.json; its exit status in $status
  status=0
  timeout 60 "$boot" --config "$dir/$1.json" --node-rank 0 --nccl-check \
    --results "$dir/$1.results.json" > "$dir/$1.out" 2> "$dir/$1.err" || status=$?
}
field() {  # field NAME PYTHON-EXPRESSION-OF-doc
  python3 -c "import json,sys; doc=json.load(open(sys.argv[1])); print($2)" "$dir/$1.results.json"
}

# The sweep across three ranks: every call waits for NCCL to take the previous one, so none is
# refused, and every sum is right (rank r adds r+1: 6 everywhere).
config "$dir/sweep.json" 30 false
run sweep
[ "$status" -eq 0 ] || { echo "sweep exited $status"; cat "$dir/sweep.err"; exit 1; }
[ "$(field sweep 'doc["status"], doc["world_size"], len(doc["rows"])')" = "passed 3 18" ] \
  || { cat "$dir/sweep.results.json"; exit 1; }
[ "$(field sweep 'sum(row["wrong"] for row in doc["rows"])')" = 0 ] || exit 1
grep -q "fake-nccl: 3 communicators created, 0 aborted, 0 live" \
  "$dir/sweep.err" || { echo "communicators leaked:"; cat "$dir/sweep.err"; exit 1; }

# The per-node step: a sub-communicator of the three ranks split from the world one.
config "$dir/node.json" 30 true
run node
[ "$status" -eq 0 ] || { echo "diagnose exited $status"; cat "$dir/node.err"; exit 1; }
[ "$(field node 'doc["localised"], len(doc["nodes"]), doc["nodes"][0]["error"] == "", doc["nodes"][0]["busbw_gbps"] > 0')" = "True 1 True True" ] \
  || { cat "$dir/node.results.json" "$dir/node.err"; exit 1; }
grep -q "fake-nccl: 6 communicators created, 0 aborted, 0 live" "$dir/node.err" \
  || { echo "communicators leaked:"; cat "$dir/node.err"; exit 1; }

# An all-reduce that never completes: the deadline ends the check with an error (exit 74), and
# every communicator is aborted rather than left behind.
config "$dir/stall.json" 2 false
export MLENV_FAKE_NCCL_STALL=1
run stall
[ "$status" -eq 74 ] || { echo "a stalled all-reduce exited $status"; cat "$dir/stall.err"; exit 1; }
[ "$(field stall 'doc["status"]')" = error ] || exit 1
grep -q "did not finish before the deadline" "$dir/stall.err" || { cat "$dir/stall.err"; exit 1; }
grep -q "fake-nccl: 3 communicators created, 3 aborted, 0 live" "$dir/stall.err" \
  || { echo "communicators left:"; cat "$dir/stall.err"; exit 1; }
echo "NCCL backend on the fake: sweep, per-node step and a stalled all-reduce passed"
