#!/usr/bin/env bash
# apply of a Slurm env whose image mlenvc builds (no `image.registry`), against recording
# stand-ins for podman, enroot and Slurm's clients: the image is built and imported into a
# squashfs named by its ID under logs/.applied/ (git ignores it: no E0701 on the next apply),
# the job's script is given that file, and the image is built and imported exactly when the
# plan says `rebuild image`. Then two envs of one image with `image.registry`: the image is
# built and pushed once, and both jobs run it by the pushed digest, never by the tag a later
# push moves.
# Usage: image_apply.sh MLENVC
set -euo pipefail
mlenvc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin log=$work/log
mkdir -p "$bin"
# podman: logs its arguments; `build --iidfile=F` writes `sha256:$FAKE_IMAGE_ID` to F, and
# `push --digestfile=F` the pushed manifest's digest, `sha256:$FAKE_IMAGE_ID`, as podman does.
cat >"$bin/podman" <<'SH'
#!/bin/sh
echo "podman $*" >>"$FAKE_LOG"
for a in "$@"; do case $a in --iidfile=* | --digestfile=*) printf 'sha256:%s' "$FAKE_IMAGE_ID" >"${a#*=}" ;; esac; done
SH
# enroot: logs its arguments; `import -o FILE URI` writes FILE.
cat >"$bin/enroot" <<'SH'
#!/bin/sh
echo "enroot $*" >>"$FAKE_LOG"
[ "$1" = import ] && [ "$2" = -o ] && echo squashfs >"$3"
exit 0
SH
# sbatch prints a job id (--parsable); squeue says it runs; scancel ends it.
cat >"$bin/sbatch" <<'SH'
#!/bin/sh
echo "sbatch $*" >>"$FAKE_LOG"
n=$(grep -c '^sbatch' "$FAKE_LOG")
echo "10$n"
SH
printf '#!/bin/sh\necho "squeue $*" >>"$FAKE_LOG"\necho "RUNNING|None|n1"\n' >"$bin/squeue"
printf '#!/bin/sh\necho "scancel $*" >>"$FAKE_LOG"\n' >"$bin/scancel"
chmod +x "$bin"/*
export PATH=$bin:$PATH FAKE_LOG=$log

repo=$work/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
cat >lab.mlenv <<'MLENV'
import "std/images/pytorch"

cluster lab {
  platform  = slurm
  api       = "localhost"
  partition = "gpu"
}

image trainer extends pytorch.pytorch29 {
  pip += ["numpy==2.1.3"]
}

env train {
  cluster = lab
  image   = trainer
  nodes   = 2
  gpus    = 0
  network = tcp
  command = ["python", "train.py"]
}
MLENV
git add lab.mlenv && git commit -qm "a Slurm env with an image mlenvc builds"
cp lab.mlenv "$work/first.mlenv"

fail() { echo "$*"; echo "--- calls:"; cat "$log"; exit 1; }
count() { grep -c "^$1" "$log" || true; }
plan() { "$mlenvc" plan lab.mlenv >"$work/plan.out" 2>&1 || { cat "$work/plan.out"; exit 1; }; }
apply() { : >"$log"; "$mlenvc" apply >"$work/apply.out" 2>&1 || { cat "$work/apply.out"; fail "apply failed"; }; }
id1=1111111111111111111111111111111111111111111111111111111111111111
id2=2222222222222222222222222222222222222222222222222222222222222222
env=plans/lab/train

# First apply: build, import, submit with the squashfs.
plan
export FAKE_IMAGE_ID=$id1
apply
[ "$(count 'podman build')" = 1 ] || fail "the image was not built once"
[ "$(count 'enroot import')" = 1 ] || fail "the image was not imported once"
grep -q "^enroot import -o $repo/$env/logs/.applied/image-$id1.sqsh.part podman://$id1\$" "$log" ||
  fail "enroot did not import the built image by its ID"
[ -f "$env/logs/.applied/image-$id1.sqsh" ] || fail "no squashfs named by the image's ID"
grep -q "^sbatch .* logs/.applied/boot-[0-9a-f]*.json logs/.applied/image-$id1.sqsh\$" "$log" ||
  fail "the job was not given the squashfs"
git log -1 --format=%B refs/mlenv/applied/lab/train | grep -qx "Slurm-Image: logs/.applied/image-$id1.sqsh" ||
  fail "the record does not name the squashfs"
[ -z "$(git status --porcelain)" ] || { git status --porcelain; fail "the import left files git sees"; }

# The script runs the squashfs it is given, inside the env directory.
grep -q 'image=${2:-' "$env/train.sbatch" || fail "the script takes no image argument"

# boot.json changes, the image does not: the job is resubmitted with the same squashfs, and
# nothing is built or imported.
sed -i 's/nodes   = 2/nodes   = 1/' lab.mlenv && git commit -qam "one node"
plan
grep -q 'SlurmJob/train' "$work/plan.out" || { cat "$work/plan.out"; fail "the plan does not resubmit"; }
! grep -q 'rebuild image' "$work/plan.out" || { cat "$work/plan.out"; fail "the plan rebuilds an unchanged image"; }
apply
[ "$(count 'podman')" = 0 ] && [ "$(count 'enroot')" = 0 ] || fail "an unchanged image was rebuilt"
grep -q "^sbatch .* logs/.applied/image-$id1.sqsh\$" "$log" || fail "the resubmitted job lost its image"

# A changed Dockerfile: the plan says `rebuild image` and resubmits; apply builds and imports
# once, cancels the old job and submits the new one with the new squashfs.
sed -i 's/numpy==2.1.3/numpy==2.1.3", "scipy==1.14.1/' lab.mlenv && git commit -qam "scipy"
plan
grep -q '~ lab/_shared/Image/trainer' "$work/plan.out" || { cat "$work/plan.out"; fail "the plan lists no image"; }
grep -q '# rebuild image trainer:.*: the Dockerfile changed' "$work/plan.out" || { cat "$work/plan.out"; fail "no rebuild image"; }
grep -q -- '-/+ lab/train/SlurmJob/train' "$work/plan.out" || { cat "$work/plan.out"; fail "the plan does not resubmit"; }
export FAKE_IMAGE_ID=$id2
apply
[ "$(count 'podman build')" = 1 ] || fail "the changed image was not built once"
[ "$(count 'enroot import')" = 1 ] || fail "the changed image was not imported once"
[ "$(count 'scancel')" = 1 ] || fail "the old job was not cancelled"
grep -q "^sbatch .* logs/.applied/image-$id2.sqsh\$" "$log" || fail "the new job runs the old image"
[ -f "$env/logs/.applied/image-$id1.sqsh" ] || fail "the old squashfs went while a job may read it"

# Two envs of one image with `image.registry`: apply builds and pushes
# `<registry>/<image>:<tag>` once and hands both scripts the pushed digest as the image.
# pyxis passes the image to enroot as `docker://<image>` (NVIDIA/pyxis pyxis_slurmstepd.c,
# enroot_container_create), and enroot fetches `/v2/<path>/manifests/<tag>` where the tag may
# be a digest, `sha256:<hex>`, since enroot 3.0.1 (NVIDIA/enroot 0a48a03 "Allow specifiying
# digests in Docker tags", src/docker.sh).
repo=$work/registry
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
sed -e 's/^image trainer extends pytorch.pytorch29 {/&\n  registry = "registry.example.com:5000\/team"/' \
  "$work/first.mlenv" >lab.mlenv
cat >>lab.mlenv <<'MLENV'

env tune {
  cluster = lab
  image   = trainer
  nodes   = 1
  gpus    = 0
  network = tcp
  command = ["python", "tune.py"]
}
MLENV
git add lab.mlenv && git commit -qm "two Slurm envs whose image is pushed"
pushed="registry.example.com:5000#team/trainer:sha256"
plan
[ "$(grep -c '+ lab/_shared/Image/trainer' "$work/plan.out")" = 1 ] ||
  { cat "$work/plan.out"; fail "the plan does not list the image once"; }
export FAKE_IMAGE_ID=$id1
apply
[ "$(count 'podman build')" = 1 ] && [ "$(count 'podman push')" = 1 ] ||
  fail "the image of both envs was not built and pushed once"
grep -q "^podman push --digestfile=[^ ]* registry.example.com:5000/team/trainer:[^ ]*\$" "$log" ||
  fail "the image was not pushed to its registry under the image's name"
[ "$(count 'enroot')" = 0 ] || fail "apply imported an image pyxis pulls"
[ "$(grep -c "^sbatch .* logs/.applied/boot-[0-9a-f]*.json $pushed:$id1\$" "$log")" = 2 ] ||
  fail "both jobs were not given the pushed digest"
for e in train tune; do
  git log -1 --format=%B refs/mlenv/applied/lab/$e |
    grep -qx "Image-Digest: registry.example.com:5000/team/trainer@sha256:$id1" ||
    fail "the record of $e does not name the pushed digest"
done
grep -q "^image=\${2:-'registry.example.com:5000#team/trainer:" plans/lab/train/train.sbatch ||
  fail "the script's image is not the registry's by default"

# boot.json of one env changes, the image does not: that job is resubmitted with the recorded
# digest, nothing is built or pushed.
sed -i 's/nodes   = 2/nodes   = 1/' lab.mlenv && git commit -qam "one node"
plan
! grep -q 'rebuild image' "$work/plan.out" || { cat "$work/plan.out"; fail "the plan rebuilds an unchanged image"; }
apply
[ "$(count 'podman')" = 0 ] || fail "an unchanged image was built or pushed"
[ "$(count 'sbatch')" = 1 ] || fail "not only the changed env was resubmitted"
grep -q "^sbatch .* $pushed:$id1\$" "$log" || fail "the resubmitted job lost its digest"

# A changed Dockerfile: `rebuild image` once in the plan, one build and push, the new digest
# for both jobs.
sed -i 's/numpy==2.1.3/numpy==2.1.3", "scipy==1.14.1/' lab.mlenv && git commit -qam "scipy"
plan
[ "$(grep -c '# rebuild image registry.example.com:5000/team/trainer:.*: the Dockerfile changed' \
  "$work/plan.out")" = 1 ] || { cat "$work/plan.out"; fail "no single rebuild image"; }
# The dry run shows the build, the push and the digest the jobs would run, running nothing.
: >"$log"
"$mlenvc" apply --dry-run >"$work/dry.out" 2>&1 || { cat "$work/dry.out"; fail "apply --dry-run"; }
[ "$(grep -c "^\\$ [^ ]*/podman push '--digestfile=<file>' registry.example.com:5000/team/trainer:" \
  "$work/dry.out")" = 1 ] && grep -q "^Would submit lab/tune: .* '$pushed:<digest>'\$" "$work/dry.out" ||
  { cat "$work/dry.out"; fail "the dry run does not show one push and the digest the jobs run"; }
[ ! -s "$log" ] || fail "the dry run ran a client"
# No builder where apply runs: E0703 and nothing submitted, as the jobs need the pushed digest.
mkdir "$work/nobuilder"
for tool in enroot sbatch squeue scancel; do ln -s "$bin/$tool" "$work/nobuilder/$tool"; done
if ! PATH=$work/nobuilder:/usr/bin:/bin command -v podman buildah docker >/dev/null; then
  PATH=$work/nobuilder:/usr/bin:/bin "$mlenvc" apply >"$work/nobuilder.out" 2>&1 &&
    fail "apply without a builder"
  grep -q 'error\[E0703\]: lab/t[a-z]*: its image must be built and pushed' "$work/nobuilder.out" ||
    { cat "$work/nobuilder.out"; fail "no E0703 without a builder"; }
  [ "$(count 'sbatch')" = 0 ] && [ "$(count 'scancel')" = 0 ] || fail "apply without a builder ran"
fi
export FAKE_IMAGE_ID=$id2
apply
[ "$(count 'podman build')" = 1 ] && [ "$(count 'podman push')" = 1 ] ||
  fail "the changed image was not built and pushed once"
[ "$(count 'scancel')" = 2 ] || fail "the old jobs were not cancelled"
[ "$(grep -c "^sbatch .* $pushed:$id2\$" "$log")" = 2 ] || fail "a new job runs the old image"
echo "apply built and imported the image exactly when the plan said so; jobs name it by ID"
echo "an image at image.registry is pushed once, and its envs' jobs run it by the pushed digest"
