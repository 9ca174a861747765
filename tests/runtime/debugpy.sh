#!/usr/bin/env bash
# `debug = true` starts debugpy for real (issue 19): one mlenv-boot node with boot.json's
# debugpy_port runs two worker programs; the rank-0 worker has imported debugpy and listens on
# 127.0.0.1:<port>, rank 1 has not, and the user's PYTHONPATH and sitecustomize still work.
# Debian's python3-debugpy; skipped (77) only where it is absent: `./mlenv test` installs it.
set -u
boot=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/python_test.sh"
require debugpy python3-debugpy
rdzv=$(free_port)
master=$(free_port)
debug=$(free_port)
# The user's own sitecustomize, which the hook must still run.
mkdir -p "$dir/user"
echo 'import os; open(os.path.join(os.environ["OUT_DIR"], "user-" + os.environ.get("RANK", "x")), "w").close()' \
  >"$dir/user/sitecustomize.py"
cat >"$dir/boot.json" <<JSON
{
  "format_version": 3,
  "job": "test/debug",
  "rank": {"env": "TEST_NODE_RANK"},
  "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": $rdzv},
  "nnodes": 1,
  "nproc_per_node": 2,
  "gpus_per_node": 0,
  "master_port": $master,
  "transport": "tcp",
  "timeouts": {"discovery_s": 30, "rendezvous_s": 30, "heartbeat_s": 1, "grace_s": 5},
  "command": ["$python", "$here/torch/debug_probe.py"],
  "launcher": "",
  "services": [],
  "hostfile": "",
  "deepspeed_env": "",
  "debugpy_port": $debug
}
JSON
env OUT_DIR="$dir" DEBUGPY_TEST_PORT=$debug TEST_NODE_RANK=0 PYTHONPATH="$dir/user" \
  MLENV_JOB_TOKEN=debugpy-test timeout 60 "$boot" --config "$dir/boot.json" >"$dir/log" 2>&1 || {
  echo "FAIL: mlenv-boot exited non-zero"
  cat "$dir/log"
  exit 1
}
actual=$(cat "$dir"/debug-*.txt)
expected="0 True True
1 False False"
if [ "$actual" != "$expected" ]; then
  echo "FAIL: the workers reported"
  echo "$actual"
  cat "$dir/log"
  exit 1
fi
[ -e "$dir/user-0" ] && [ -e "$dir/user-1" ] || { echo "FAIL: the user's sitecustomize did not run"; exit 1; }
grep -q "debugpy listens on 127.0.0.1:$debug in rank 0" "$dir/log" || { cat "$dir/log"; exit 1; }
echo "rank 0 listens for debugpy on $debug, rank 1 does not; the user's sitecustomize ran"
