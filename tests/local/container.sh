#!/usr/bin/env bash
# platform local, an env with an image (issue 18 item E): apply builds the image and runs each
# node with `podman run`. podman here is tests/local/fake_podman.sh, which records its
# arguments and runs each "container" on the host, so the real mlenv-boot still runs and both
# nodes meet on loopback. Checked: the build and run commands (host network and IPC, the env
# directory at its own path, the token passed by name only), status naming the containers,
# logs, shell --rank 1 (an `exec` into rank 1's container), an unchanged apply (nothing run),
# a changed command (the containers removed, no rebuild), a changed image (rebuilt), destroy
# (`rm -f`, no process left); `runtime = host`, and a runtime not on PATH, run on the host;
# two envs of one image build it once; `runtime` on a Slurm cluster is E0418.
# Usage: container.sh MLENVC MLENV_BOOT FAKE_PODMAN PROGRAM_TEMPLATE
set -euo pipefail
mlenvc=$1 boot=$2 fake=$3 template=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cleanup() {
  for pid in "$work"/plans/*/*/run/rank-*.pid; do
    [ -f "$pid" ] && pkill -KILL -s "$(cat "$pid")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
mkdir bin containers
ln -s "$fake" bin/podman
ln -s "$boot" bin/mlenv-boot
export MLENV_FAKE_LOG=$work/podman.log MLENV_FAKE_CONTAINERS=$work/containers
# Only the stand-in: no docker or podman of this machine (/usr/local/bin) is found.
export PATH="$work/bin:/usr/bin:/bin"
unset MLENV_BOOT

. "$here/../slurm/free_port.sh"
rdzv=$(free_port)
master=$(free_port)
while [ "$master" = "$rdzv" ]; do master=$(free_port); done
sed -e "s/@RDZV_PORT@/$rdzv/" -e "s/@MASTER_PORT@/$master/" "$template" >lab.mlenv
git add lab.mlenv && git commit -qm "an env in its image"
dir=$work/plans/laptop/boxed
fail() { echo "FAIL: $*"; cat podman.log 2>/dev/null; for f in "$dir"/run/*.log; do echo "== $f"; tail -n 20 "$f"; done; exit 1; }
wait_running() {
  for _ in $(seq 1 100); do
    "$mlenvc" status boxed >status.out 2>&1 || true
    [ "$(grep -c running status.out)" = 2 ] && [ -f "$dir/run/rank-1.txt" ] && return 0
    sleep 0.3
  done
  cat status.out
  fail "$1"
}

"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
[ -f "$dir/Dockerfile" ] || fail "no Dockerfile for an env with an image"
# The image apply builds and runs is the one plan.json's `start` names.
image=$(sed -n 's/^ *"image": "\([^"]*\)",*$/\1/p' "$dir/plan.json")
[ -n "$image" ] || fail "plan.json's start action names no image"
grep -qF "runs in its image \`$image\`, which apply builds" plan.out || { cat plan.out; fail "no note"; }
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -qxF "argv: podman build -f $dir/Dockerfile -t $image $work/plans" podman.log ||
  fail "no build of the image"
for _ in $(seq 1 50); do [ "$(grep -c "argv: podman run" podman.log)" = 2 ] && break; sleep 0.2; done
for rank in 0 1; do
  grep -qxF "argv: podman run --rm --name mlenv-laptop-boxed-$rank --network host --ipc host -v $dir:$dir -w $dir -e MLENV_NODE_RANK -e MLENV_JOB_TOKEN --entrypoint /usr/local/bin/mlenv-boot $image --config boot.json" podman.log ||
    fail "rank $rank was not run in a container"
done
grep -qF "$(cat "$dir/run/token")" podman.log && fail "the token is in an argument"
wait_running "the containers do not run"
grep -q "containers of mlenv-laptop-boxed-0... with $work/bin/podman" status.out ||
  { cat status.out; fail "status does not name the containers"; }
for rank in 0 1; do
  read -r r world addr <"$dir/run/rank-$rank.txt" || fail "rank $rank wrote nothing"
  [ "$r $world $addr" = "$rank 2 127.0.0.1" ] || fail "rank $rank saw '$r $world $addr'"
done
"$mlenvc" logs boxed >logs.out 2>&1
grep -q '^\[1\] saw RANK=1$' logs.out || { cat logs.out; fail "logs lack rank 1's line"; }
"$mlenvc" shell boxed --rank 1 <<<'echo "in=$MLENV_FAKE_CONTAINER pwd=$(pwd)"' >shell.out 2>&1 ||
  { cat shell.out; fail "shell failed"; }
grep -qx "in=mlenv-laptop-boxed-1 pwd=$dir" shell.out || { cat shell.out; fail "shell is not in rank 1's container"; }

# Unchanged: nothing built or run. A changed command: the old containers go, no rebuild.
: >podman.log
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
[ ! -s podman.log ] || fail "an unchanged apply ran the container runtime"
sed -i 's/sleep 600/sleep 601/' lab.mlenv && git commit -qam "sleep longer"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -qx "argv: podman rm -f mlenv-laptop-boxed-0 mlenv-laptop-boxed-1" podman.log ||
  fail "the old containers were not removed"
grep -q "argv: podman build" podman.log && fail "a changed command rebuilt the image"
# Each node's session runs the client in the background: its line comes when it starts.
for _ in $(seq 1 50); do [ "$(grep -c "argv: podman run" podman.log)" = 2 ] && break; sleep 0.2; done
[ "$(grep -c "argv: podman run" podman.log)" = 2 ] || { cat apply.out; fail "not both nodes started again"; }
# A changed image is built again.
: >podman.log
sed -i 's/einops==0.8.0/einops==0.8.1/' lab.mlenv && git commit -qam "another einops"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
rm -f "$dir"/run/rank-*.txt
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -q "argv: podman build -f $dir/Dockerfile" podman.log || fail "a changed image was not rebuilt"
wait_running "the new containers do not run"
sids=$(cat "$dir"/run/rank-*.pid)
"$mlenvc" destroy boxed >destroy.out 2>&1 || { cat destroy.out; fail "destroy failed"; }
grep -qx "argv: podman rm -f mlenv-laptop-boxed-0 mlenv-laptop-boxed-1" podman.log || fail "destroy removed no container"
for sid in $sids; do
  [ -z "$(ps -o stat= -s "$sid" | grep -v '^Z' || true)" ] || fail "session $sid runs after destroy"
done
[ ! -e "$dir/run/runtime" ] || fail "destroy kept run/runtime"

# A runtime not on PATH, and `runtime = host`: on the host, said so.
sed -i 's/api      = "localhost"/api      = "localhost"\n  runtime  = docker/' lab.mlenv
git commit -qam "docker"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
: >podman.log
rm -f "$dir"/run/rank-*.txt
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
grep -qx 'laptop/boxed: docker is not on PATH: its nodes run on the host, not in its image' apply.out ||
  { cat apply.out; fail "no word that docker is missing"; }
[ ! -s podman.log ] || fail "podman ran though the cluster names docker"
wait_running "the nodes do not run on the host"
"$mlenvc" destroy boxed >destroy.out 2>&1 || { cat destroy.out; fail "destroy failed"; }
sed -i 's/runtime  = docker/runtime  = host/' lab.mlenv && git commit -qam "host"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
[ ! -e "$dir/Dockerfile" ] || fail "runtime = host still has a Dockerfile"
rm -f "$dir"/run/rank-*.txt
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply failed"; }
[ ! -s podman.log ] || fail "runtime = host ran podman"
wait_running "runtime = host does not run"
"$mlenvc" destroy boxed >destroy.out 2>&1 || { cat destroy.out; fail "destroy failed"; }

# Two envs of one image: a dry run builds it once (issue 18: one image per program).
sed -i 's/runtime  = host/runtime  = podman/' lab.mlenv
twin_rdzv=$(free_port)
twin_master=$(free_port)
while [ "$twin_master" = "$twin_rdzv" ]; do twin_master=$(free_port); done
printf '%s\n' 'env twin {' '  cluster     = laptop' '  image       = app' '  gpus        = 0' \
  '  network     = tcp' '  command     = ["true"]' "  rdzv_port   = $twin_rdzv" \
  "  master_port = $twin_master" '}' >>lab.mlenv
git commit -qam "a twin of one image"
"$mlenvc" plan lab.mlenv >plan.out 2>&1 || { cat plan.out; exit 1; }
"$mlenvc" apply --dry-run >apply.out 2>&1 || { cat apply.out; fail "dry run failed"; }
[ "$(grep -c "^Would build " apply.out)" = 1 ] || { cat apply.out; fail "not one build of the shared image"; }
grep -qx "laptop/twin: its image $image is built above" apply.out ||
  grep -qx "laptop/boxed: its image $image is built above" apply.out ||
  { cat apply.out; fail "the second env does not say its image is built"; }

# `runtime` is local's: E0418 on Slurm.
printf '%s\n' 'cluster hpc {' '  platform  = slurm' '  api       = "x"' '  partition = "gpu"' \
  '  runtime   = podman' '}' 'env job {' '  cluster = hpc' '  gpus    = 0' '  network = tcp' \
  '  command = ["true"]' '}' >slurm.mlenv
if "$mlenvc" check slurm.mlenv >check.out 2>&1; then fail "runtime passed on Slurm"; fi
grep -q 'E0418' check.out || { cat check.out; fail "runtime on Slurm is not E0418"; }
echo "local containers: built, run, status, logs, shell, restart, rebuild, destroy; host otherwise"
