#!/usr/bin/env bash
# Apply did exactly what the plan listed (issue 18 B), on Slurm: apply runs against recording
# stand-ins (tests/plan/fake_kubectl.sh) for sbatch, squeue, sacct, scancel and podman, which
# answer as a cluster whose jobs run: sbatch gives each submission the next job id, squeue
# says every job runs. After each scenario the jobs apply submitted and cancelled (a
# submission is a create, a cancel a delete, both a replace of `<env>/SlurmJob/<env>`) must be
# exactly those the plan's JSON summary listed. The real two-node Slurm tests (tests/slurm/)
# show that those commands do what they say.
# usage: slurm.sh MLENVC FAKE
set -euo pipefail
mlenvc=$1 fake=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
contract_platform=slurm
mkdir "$work/bin"
for tool in sbatch squeue sacct scancel podman enroot; do ln -s "$fake" "$work/bin/$tool"; done
export MLENV_FAKE_LOG="$work/calls.log" MLENV_FAKE_REPLIES="$work/replies"
# Job ids in submission order (contract.py counts them the same way), every job running.
{ for id in $(seq 1000 1099); do echo "once:--parsable|0|$id"; done
  echo "-t all|0|RUNNING|None|n1"; } > "$MLENV_FAKE_REPLIES"
contract_run() { PATH="$work/bin:$PATH" "$mlenvc" "$@"; }

contract_init "$work" "$here/slurm.mlenv.in"
contract_plan && contract_apply
# boxed and boxed2 run one image: one build, one import, and both jobs run that squashfs.
[ "$(grep -c '^argv: podman build' calls.log)" = 1 ] && [ "$(grep -c '^argv: enroot import' calls.log)" = 1 ] ||
  contract_fail "not one build and import per image: $(grep '^argv: \(podman\|enroot\)' calls.log)"
# One squashfs (a hard link in each env's logs/.applied/) for the envs of one image.
same_squashfs() {
  local f
  f=$(ls "plans/hpc/$2/logs/.applied/"image-*.sqsh)
  [ "$f" -ef "plans/hpc/$1/logs/.applied/$(basename "$f")" ]
}
same_squashfs boxed boxed2 || contract_fail "the envs of one image do not share its squashfs"
contract_what="unchanged" && contract_plan && contract_apply
contract_edit 's/"hostname"/"uname"/' "the host env's command: re-submitted"
contract_plan && contract_apply
contract_edit 's/einops==0.8.0/einops==0.8.1/' "the image: rebuilt once"
contract_plan && contract_apply
contract_edit '/^env host/,/^}/d' "the host env removed"
# Its folder is gone too, logs and all: the record alone names its job (issue 30.7).
contract_plan && rm -rf plans/hpc/host && contract_apply
contract_edit '/^env boxed2/,/^}/d' "an env of the image removed: boxed keeps it"
contract_plan && contract_apply
contract_edit '$a env boxed3 {\n  cluster = hpc\n  image   = app\n  nodes   = 1\n  gpus    = 0\n  network = tcp\n  command = ["python", "eval.py"]\n}' \
  "a new env of the image apply built: nothing is built"
contract_plan && contract_apply
grep -q '^argv: \(podman\|enroot\)' calls.log && contract_fail "boxed3 built or imported its image"
same_squashfs boxed boxed3 || contract_fail "boxed3 does not run boxed's squashfs"
contract_destroy boxed
echo "contract.slurm: apply did what each plan listed"
