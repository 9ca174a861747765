#!/bin/sh
# The same env retargets by changing only its cluster: one env and image, on an openshift,
# a kubernetes and a slurm cluster (which differ in `platform` and the fields only that platform
# has: a namespace and storage, or a partition), check clean on each; OpenShift gets its Job,
# BuildConfig and ImageStream, Kubernetes a JobSet and none of them, Slurm a batch script and no
# object at all; boot.json differs only in where the rank and rank 0 are, and the image is
# built from the same Dockerfile.
# Usage: retarget.sh MLENVC
set -eu
mlenvc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "retarget: $*" >&2; exit 1; }
cat > "$tmp/program.mlenv.in" <<'MLENV'
import "std/images/pytorch"
import "std/profiles/h100"
import "std/storage/nfs"

cluster lab extends h100.node8 {
  platform  = PLATFORM
  api       = "api.lab.example.com"
  FIELDS
}

image trainer extends pytorch.pytorch29 {
  registry = "registry.lab.example.com/ml"
}

env train {
  cluster  = lab
  image    = trainer
  nodes    = 2
  network  = tcp
  command  = ["python", "/workspace/train.py"]
}
MLENV
for platform in openshift kubernetes slurm; do
  fields='namespace = "research"\n  storage   = nfs.rwx'
  [ "$platform" != slurm ] || fields='partition = "gpu"'
  sed "s/PLATFORM/$platform/; s/FIELDS/$fields/" "$tmp/program.mlenv.in" > "$tmp/$platform.mlenv"
  "$mlenvc" check "$tmp/$platform.mlenv" 2> "$tmp/$platform.check" ||
    fail "check failed on $platform: $(cat "$tmp/$platform.check")"
  "$mlenvc" build "$tmp/$platform.mlenv" -o "$tmp/$platform" 2> /dev/null ||
    fail "build failed on $platform"
done
os=$tmp/openshift/lab/train k8s=$tmp/kubernetes/lab/train
for f in job-train.yaml buildconfig-trainer.yaml imagestream-trainer.yaml; do
  [ -f "$os/$f" ] || fail "openshift lacks $f"
  [ ! -f "$k8s/$f" ] || fail "kubernetes has OpenShift's $f"
done
[ -f "$k8s/jobset-train.yaml" ] || fail "kubernetes lacks its JobSet"
grep -q '"platform": "kubernetes"' "$k8s/plan.json" || fail "plan.json does not name kubernetes"
# boot.json: the same but for rank 0's host (a Job's pod 0 against a JobSet's).
sed '/"host":/d' "$os/boot.json" > "$tmp/os.boot"
sed '/"host":/d' "$k8s/boot.json" > "$tmp/k8s.boot"
diff -u "$tmp/os.boot" "$tmp/k8s.boot" >&2 || fail "boot.json differs beyond rank 0's host"
grep -q '"host": "train-0.train-headless.research.svc"' "$os/boot.json" || fail "openshift host"
grep -q '"host": "train-node-0-0.train-headless.research.svc"' "$k8s/boot.json" ||
  fail "kubernetes host"
# The Dockerfile: the same but for the comment naming how it is built.
sed '/^# Built by/d' "$os/Dockerfile" > "$tmp/os.docker"
sed '/^# Built by/d' "$k8s/Dockerfile" > "$tmp/k8s.docker"
diff -u "$tmp/os.docker" "$tmp/k8s.docker" >&2 || fail "the Dockerfiles differ"
# Slurm: one batch script and no objects; the rank from SLURM_NODEID and rank 0 from the
# address the script exports; the launcher files (hostfile, .deepspeed_env) in the env
# directory's logs/ rather than the pod's /run/mlenv; the rest of boot.json and the Dockerfile
# as on OpenShift.
slurm=$tmp/slurm/lab/train
[ -f "$slurm/train.sbatch" ] || fail "slurm lacks its batch script"
[ -z "$(find "$slurm" -name '*.yaml')" ] || fail "slurm has Kubernetes objects"
grep -q '"platform": "slurm"' "$slurm/plan.json" || fail "plan.json does not name slurm"
grep -v '"host\|"deepspeed_env"' "$os/boot.json" | sed 's/JOB_COMPLETION_INDEX/RANK/' > "$tmp/os.boot"
grep -v '"host\|"deepspeed_env"' "$slurm/boot.json" | sed 's/SLURM_NODEID/RANK/' > "$tmp/slurm.boot"
diff -u "$tmp/os.boot" "$tmp/slurm.boot" >&2 || fail "slurm's boot.json differs beyond rank 0"
grep -q '"host_env": "MLENV_RDZV_HOST"' "$slurm/boot.json" || fail "slurm's rank 0"
sed '/^# Built by/d' "$slurm/Dockerfile" > "$tmp/slurm.docker"
diff -u "$tmp/os.docker" "$tmp/slurm.docker" >&2 || fail "slurm's Dockerfile differs"
echo "retarget: one env, three platforms"
