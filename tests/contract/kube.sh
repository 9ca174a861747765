#!/usr/bin/env bash
# Apply did exactly what the plan listed (issue 18 B), on OpenShift or Kubernetes: apply runs
# against tests/plan/fake_kubectl.sh as oc, kubectl and podman, answering like the cluster
# (contract.py keeps the cluster's objects between applies; a build makes a new digest), and
# after each scenario the actions apply took (objects created, updated, replaced, deleted,
# pods rolled, images built) must be exactly those the plan's JSON summary listed.
# usage: kube.sh openshift|kubernetes MLENVC FAKE_KUBECTL
set -euo pipefail
platform=$1 mlenvc=$2 fake=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
contract_platform=kube
mkdir "$work/bin"
for tool in oc kubectl podman; do ln -s "$fake" "$work/bin/$tool"; done
export MLENV_FAKE_LOG="$work/calls.log" MLENV_FAKE_REPLIES="$work/replies"
export MLENV_FAKE_BUILDS="$work/builds"
# apply first checks that the client points at the cluster's api (E0719).
export MLENV_FAKE_SERVER=https://api.lab.example.com:6443
# A Kubernetes cluster serves none of OpenShift's kinds: the stand-in refuses them as it would.
[ "$platform" = openshift ] || export MLENV_FAKE_API=kubernetes
# The namespace exists; a built image's digest is the stand-in's last build of it (its
# `get istag`).
printf '%s\n' 'get namespace|0|namespace/ml' > "$MLENV_FAKE_REPLIES"
contract_run() { PATH="$work/bin:$PATH" "$mlenvc" "$@"; }

# OpenShift builds in the cluster (no registry); Kueue's queue is Kubernetes'.
if [ "$platform" = openshift ]; then init='/registry =/d; /queue/d'; else init=''; fi
contract_init "$work" "$here/kube.mlenv.in" "s/@PLATFORM@/$platform/; $init"

# Two images: `app` of dev and train, built once, and eval's own.
contract_plan && contract_apply
[ "$(grep -c '^argv: \(oc start-build\|podman build\)' calls.log)" = 2 ] ||
  contract_fail "not one build per image: $(grep '^argv: \(oc start-build\|podman build\)' calls.log)"
contract_what="unchanged" && contract_plan && contract_apply
contract_edit 's/workspace = 100Gi/workspace = 200Gi/' "in place: claims grow"
contract_plan && contract_apply
contract_edit '/^env dev/,/^}/ s/nodes   = 2/nodes   = 3/' "boot.json and replicas of the dev env"
contract_plan && contract_apply
contract_edit 's/"train.py"/"train2.py"/' "the run's command: a new run"
contract_plan && contract_apply
contract_edit 's/einops==0.8.0/einops==0.8.1/' "the images: rebuilt, each once"
contract_plan && contract_apply
contract_edit '/^env eval/,/^}/d' "the run with an image of its own removed: its image too"
contract_plan && contract_apply
contract_edit '/^env train/,/^}/d' "a run removed: dev keeps its image"
# The cluster's claims are shared (dev still mounts them) and kept with their data when the
# last env leaves: neither takes a flag nor deletes one. The run's folder is gone too: the
# record alone says what it applied (issue 30.7).
contract_plan && rm -rf plans/lab/train && contract_apply
# Kueue's queue is Kubernetes' (E0418 on OpenShift), and every env of dev's namespace needs it.
queue=''
[ "$platform" = openshift ] || queue='\n  queue   = "team-a"'
contract_edit '$a env train2 {\n  cluster = lab\n  image   = app\n  nodes   = 1\n  gpus    = 0\n  network = tcp\n  command = ["python", "train.py"]'"$queue"'\n}' \
  "a new run of the image apply built: nothing is built"
contract_plan && contract_apply
contract_destroy dev
contract_destroy train2
echo "contract.$platform: apply did what each plan listed"
