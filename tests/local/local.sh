#!/usr/bin/env bash
# platform local for real (issue 18 item E): `mlenvc plan` and `apply` of two CPU-only
# two-node envs start each node as an mlenv-boot process of this machine, meeting on loopback.
# `ranks` exits by itself: status shows both ranks exited 0, logs show each rank's line, and
# each rank's command saw RANK, WORLD_SIZE and MASTER_ADDR 127.0.0.1. `sleeper` runs: status
# shows both running, shell --rank 1 has the command's environment, an unchanged apply keeps
# it, a changed one restarts it, destroy ends every process of its nodes and keeps none. A
# reused pid, an `env` on PATH and a planted run/runtime are not trusted (issue 32). A field
# that does not apply on local is E0418, a port two local envs share E0423. An env whose folder
# left the plan is stopped by the sessions its record names.
# Usage: local.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE
set -euo pipefail
mlenvc=$1 boot=$2 template=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
sessions=()
cleanup() {
  # Whatever the test left running is ended here, by the sessions it recorded.
  for sid in "${sessions[@]}"; do pkill -KILL -s "$sid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost

. "$here/../slurm/free_port.sh"
ports=()
while [ "${#ports[@]}" -lt 4 ]; do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
sed -e "s/@RDZV_PORT@/${ports[0]}/" -e "s/@MASTER_PORT@/${ports[1]}/" \
  -e "s/@RDZV_PORT2@/${ports[2]}/" -e "s/@MASTER_PORT2@/${ports[3]}/" "$template" >lab.mlenv
git add lab.mlenv && git commit -qm "two local envs"
fail() { echo "FAIL: $*"; for f in plans/laptop/*/run/*.log; do echo "== $f"; tail -n 20 "$f"; done; exit 1; }

"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
grep -q 'LocalRun/ranks' plan.out || { cat plan.out; fail "the plan does not show ranks' run"; }
grep -q '"platform": "local"' plans/laptop/ranks/plan.json || fail "plan.json is not local's"
grep -q '"host": "127.0.0.1"' plans/laptop/ranks/boot.json || fail "rank 0 is not on loopback"
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
cat apply.out
for env in ranks sleeper; do
  for rank in 0 1; do sessions+=("$(cat "plans/laptop/$env/run/rank-$rank.pid")"); done
done
[ "$(stat -c %a plans/laptop/ranks/run/token)" = 600 ] || fail "the token file is not 0600"
[ -z "$(git status --porcelain plans)" ] || { git status --porcelain plans; fail "run/ is not ignored"; }

# ranks: both nodes meet and exit 0.
for _ in $(seq 1 100); do
  "$mlenvc" status ranks >status.out 2>&1 || true
  [ "$(grep -c 'exited 0' status.out)" = 2 ] && break
  sleep 0.3
done
cat status.out
[ "$(grep -c 'exited 0' status.out)" = 2 ] || fail "ranks did not both exit 0"
for rank in 0 1; do
  read -r r world addr _ <"plans/laptop/ranks/run/rank-$rank.txt" || fail "rank $rank wrote nothing"
  [ "$r $world $addr" = "$rank 2 127.0.0.1" ] || fail "rank $rank saw '$r $world $addr'"
done
"$mlenvc" logs ranks >logs.out 2>&1 || { cat logs.out; fail "logs failed"; }
for rank in 0 1; do
  grep -q "^\[$rank\] saw RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1$" logs.out ||
    { cat logs.out; fail "logs lack rank $rank's line"; }
done
"$mlenvc" logs ranks --rank 1 >logs1.out 2>&1
! grep -q '^\[0\]' logs1.out || fail "logs --rank 1 shows rank 0"
grep -q '^\[1\] saw RANK=1' logs1.out || fail "logs --rank 1 lacks rank 1"
# -f follows until no node runs: here at once, with every line.
timeout 20 "$mlenvc" logs ranks -f >logsf.out 2>&1 || fail "logs -f did not end"
cmp -s <(sort logs.out) <(sort logsf.out) || { diff logs.out logsf.out; fail "logs -f differs"; }

# sleeper: running; a shell has rank 1's environment; destroy leaves no process. The
# environment (the job token with it) never rides on an argument that /proc/PID/cmdline shows
# every user (issue 32): an `env` first on PATH would have seen it.
mkdir -p bin
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >>"%s/env-args"\nexec /usr/bin/env "$@"\n' "$work" >bin/env
chmod +x bin/env
for _ in $(seq 1 100); do
  PATH="$work/bin:$PATH" "$mlenvc" shell sleeper --rank 1 <<<'echo "shell RANK=$RANK"' >shell.out 2>&1 && break
  sleep 0.3
done
grep -qx 'shell RANK=1' shell.out || { cat shell.out; fail "the shell lacks rank 1's environment"; }
! grep -q MLENV_JOB_TOKEN env-args 2>/dev/null || fail "shell passed the job token as an argument"
"$mlenvc" status sleeper >status.out 2>&1
[ "$(grep -c running status.out)" = 2 ] || { cat status.out; fail "sleeper is not running"; }

# Applied again unchanged, a running env keeps its nodes; changed, the plan says its nodes
# restart and apply ends the old ones before it starts the new.
old_sids=$(cat plans/laptop/sleeper/run/rank-*.pid)
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -qx 'laptop/sleeper: unchanged, running' apply.out || { cat apply.out; fail "not kept"; }
grep -qx 'laptop/ranks: unchanged, ended' apply.out || { cat apply.out; fail "ranks ran again"; }
sed -i 's/"sleep", "600"/"sleep", "601"/' lab.mlenv && git commit -qam "sleep longer"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
grep -A1 '^-/+ laptop/sleeper/LocalRun/sleeper' plan.out | grep -q 'nodes restart' || { cat plan.out; fail "no restart planned"; }
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -q 'Stopping 2 running nodes of laptop/sleeper' apply.out || { cat apply.out; fail "not stopped"; }
for sid in $old_sids; do
  [ -z "$(ps -o stat= -s "$sid" | grep -v '^Z' || true)" ] || fail "old session $sid still runs"
done
for rank in 0 1; do sessions+=("$(cat "plans/laptop/sleeper/run/rank-$rank.pid")"); done
for _ in $(seq 1 50); do
  "$mlenvc" status sleeper >status.out 2>&1
  [ "$(grep -c running status.out)" = 2 ] && break
  sleep 0.2
done
[ "$(grep -c running status.out)" = 2 ] || { cat status.out; fail "new sleeper is not running"; }
sids=$(cat plans/laptop/sleeper/run/rank-*.pid)
# run/ is git-ignored, yet a pulled commit can add run/runtime: shell and destroy run only the
# podman or docker apply would, never what the file names (issue 32).
printf '#!/bin/sh\ntouch "%s/pwned"\n' "$work" >evil && chmod +x evil
echo "$work/evil" >plans/laptop/sleeper/run/runtime
"$mlenvc" shell sleeper --rank 0 <<<'true' >shell.out 2>&1 || true
"$mlenvc" destroy sleeper >destroy.out 2>&1 || { cat destroy.out; fail "destroy failed"; }
[ ! -e pwned ] || fail "shell or destroy ran the program run/runtime names"
# A zombie has ended; only its parent can reap it, which for these is init (where init reaps
# nothing, as in some containers, they stay listed with state Z).
for sid in $sids; do
  left=$(ps -o stat= -s "$sid" | grep -v '^Z' || true)
  [ -z "$left" ] || { ps -f -s "$sid"; fail "session $sid has processes after destroy"; }
done
[ ! -e plans/laptop/sleeper/run/rank-0.pid ] || fail "destroy kept the pid files"

# A pid reused after a node ended is another process (issue 32): status does not call it
# running and destroy leaves it alone. The pid file names a live session whose start time is
# not the recorded one.
setsid sleep 600 &
reused=$!
sessions+=("$reused")
echo "$reused" >plans/laptop/ranks/run/rank-0.pid
echo 1 >plans/laptop/ranks/run/rank-0.start
"$mlenvc" status ranks >status.out 2>&1 || true
! grep -q running status.out || { cat status.out; fail "a reused pid is called running"; }
"$mlenvc" destroy ranks >destroy.out 2>&1 || { cat destroy.out; fail "destroy ranks failed"; }
kill -0 "$reused" 2>/dev/null || fail "destroy ended a process that reused a node's pid"
kill "$reused"

# A field another platform has: E0418.
sed 's/api      = "localhost"/api = "localhost"\n  partition = "gpu"/' lab.mlenv >bad.mlenv
if "$mlenvc" check bad.mlenv >check.out 2>&1; then fail "partition passed on local"; fi
grep -q 'E0418' check.out || { cat check.out; fail "partition is not E0418"; }
# Two local envs listen on one machine: a port both use is E0423.
sed "s/rdzv_port   = ${ports[2]}/rdzv_port   = ${ports[1]}/" lab.mlenv >clash.mlenv
if "$mlenvc" check clash.mlenv >check.out 2>&1; then fail "a shared port passed on local"; fi
grep -q "E0423.*port ${ports[1]} is also the port of env \`ranks\`" check.out ||
  { cat check.out; fail "a shared port is not E0423"; }
# An env whose folder left the plan, run/ and all, is stopped by the sessions its record names
# (`Local-Sessions:`, issue 30.7): no pid file says where its nodes are any more.
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
for rank in 0 1; do sessions+=("$(cat "plans/laptop/sleeper/run/rank-$rank.pid")"); done
sids=$(cat plans/laptop/sleeper/run/rank-*.pid)
sed -i '/^env sleeper/,/^}/d' lab.mlenv && git commit -qam "sleeper leaves"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
rm -rf plans/laptop/sleeper
MLENV_BOOT=$boot "$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -q 'Stopping 2 running nodes of laptop/sleeper' apply.out ||
  { cat apply.out; fail "the env whose folder left was not stopped"; }
for sid in $sids; do
  left=$(ps -o stat= -s "$sid" | grep -v '^Z' || true)
  [ -z "$left" ] || { ps -f -s "$sid"; fail "session $sid of the env that left still runs"; }
done
echo "local: two nodes ran, status, logs, shell and destroy work; partition is E0418"
