#!/bin/sh
# A cluster's `rwx` storage through the mlenvc binary, in a temporary git repository: two runs
# of one cluster share its claims, a third with its own `storage` block has its own; plan shows
# the shared claims once and says who shares them; removing one env neither plans nor applies
# the deletion of a claim the other env still mounts; removing the last one plans it, behind
# --allow-destroy.
# usage: storage_e2e.sh MLENVC EXAMPLES_DIR FAKE_KUBECTL
set -eu
mlenvc=$1 examples=$2 fake=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
git init -q -b main . && git config user.email t@example.com && git config user.name Test
cp "$examples/tcp-cluster.mlenv" lab.mlenv
cat >> lab.mlenv <<'MLENV'

env eval {
  cluster = lab
  image   = pytorch.pytorch28
  nodes   = 1
  gpus    = 8
  network = auto
  command = ["python", "/workspace/eval.py"]
}

env scratch {
  cluster = lab
  image   = pytorch.pytorch28
  nodes   = 1
  gpus    = 8
  network = auto
  command = ["python", "/workspace/scratch.py"]
  storage {
    workspace = 2Ti
  }
}
MLENV
git add lab.mlenv && git commit -qm sources

"$mlenvc" plan lab.mlenv > first.out 2> first.err || { cat first.err; fail "first plan"; }
for claim in lab-workspace lab-datasets; do
  [ "$(grep -c "^  + lab/_shared/PersistentVolumeClaim/$claim\$" first.out)" = 1 ] ||
    { cat first.out; fail "the shared claim $claim is not planned once"; }
done
grep -q '^  + lab/scratch/PersistentVolumeClaim/scratch-workspace$' first.out ||
  fail "scratch's own claim is not planned"
grep -q 'PersistentVolumeClaim/\(trainer\|eval\)-' first.out && fail "a claim named after a sharing env"
# The three envs run one image: one BuildConfig and ImageStream named after it, one build.
for line in Image/pytorch28 BuildConfig/pytorch28 ImageStream/pytorch28; do
  [ "$(grep -c "^  + lab/_shared/$line\$" first.out)" = 1 ] ||
    { cat first.out; fail "$line is not planned once"; }
done
grep -q '^note: lab/eval, lab/trainer: share the claims `lab-workspace` and `lab-datasets` of cluster `lab` in namespace `research`' first.err ||
  { cat first.err; fail "the plan does not say which envs share the claims"; }
grep -q '^note: lab/scratch: its own claims `scratch-workspace` and `scratch-datasets`' first.err ||
  fail "the plan does not say scratch's claims are its own"
"$mlenvc" build lab.mlenv -o out > /dev/null 2> build.err || fail "build"
grep -q '^note: lab/eval, lab/trainer: share the claims' build.err || fail "build does not say who shares"
grep -q 'claimName: lab-workspace' out/lab/eval/job-eval.yaml || fail "eval does not mount lab-workspace"
grep -q 'claimName: lab-workspace' out/lab/trainer/job-trainer.yaml || fail "trainer does not mount lab-workspace"
grep -q 'claimName: scratch-workspace' out/lab/scratch/job-scratch.yaml || fail "scratch does not mount its own"

mkdir bin && ln -s "$fake" bin/oc
export MLENV_FAKE_LOG="$tmp/log" MLENV_FAKE_REPLIES="$tmp/replies"
# apply first checks that the client points at the cluster's api (E0719).
export MLENV_FAKE_SERVER=https://api.lab.example.com:6443
printf '%s\n' 'get namespace|0|namespace/research' 'auth can-i|0|yes' \
  'get istag|0|image-registry.openshift-image-registry.svc:5000/research/x@sha256:0000000000000000000000000000000000000000000000000000000000000000' \
  > "$tmp/replies"
PATH="$tmp/bin:$PATH" "$mlenvc" apply > apply.out 2> apply.err || { cat apply.err; fail "first apply"; }
[ "$(grep -c '^argv: oc start-build pytorch28 ' log)" = 1 ] || { cat log; fail "not one build"; }
# The sharing envs apply the cluster's claims as the cluster's one field manager, without an
# ApplySet label (targets/kube/apply/steps.cc): no env's prune selects them, and a change of
# them by any env is no conflict with another's.
grep -A1 "^argv: oc apply --server-side --field-manager=mlenvc-lab-shared -n research -f -\$" log |
  grep -q '"kind":"PersistentVolumeClaim".*"name":"lab-workspace"' ||
  { cat log; fail "the shared claim is not applied as the cluster's field manager"; }
grep -q -- '--field-manager=mlenvc-\(trainer\|eval\) ' log &&
  { cat log; fail "a shared object is applied as an env's own field manager"; }
grep '"name":"lab-workspace"' log | grep -q 'applyset.k8s.io/part-of' &&
  fail "the shared claim carries an env's ApplySet label"

# eval leaves: trainer still mounts the claims.
sed -i '/^env eval {$/,/^}$/d' lab.mlenv
git commit -qam "no eval"
"$mlenvc" plan lab.mlenv > second.out 2> second.err || { cat second.err; fail "second plan"; }
grep -q '^  - lab/eval/Job/eval$' second.out || fail "eval's Job is not deleted"
grep -q 'PersistentVolumeClaim' second.out && { cat second.out; fail "a claim is planned while trainer mounts it"; }
# Its copies of the claims and of the image's BuildConfig and ImageStream, which the others run.
grep -q '^Shared objects: 4 env copies came or went with their envs; the objects stay as they are.$' second.out ||
  { cat second.out; fail "the plan does not say the shared claims and image stay"; }
grep -q '^note: lab/trainer: share the claims `lab-workspace` and `lab-datasets`' second.err ||
  fail "the note does not follow the envs that share"
: > "$tmp/log"
PATH="$tmp/bin:$PATH" "$mlenvc" apply > apply2.out 2> apply2.err || { cat apply2.err; fail "second apply"; }
grep -q '^argv: oc delete jobs.batch .*metadata.name=eval ' log ||
  { cat log; fail "apply does not delete eval's Job"; }
grep -q '^argv: oc delete persistentvolumeclaim' log && { cat log; fail "apply deleted a claim trainer mounts"; }
grep -q '^argv: oc \(start-build\|delete \(buildconfigs\|imagestreams\)\)' log &&
  { cat log; fail "apply built or deleted the image trainer and scratch run"; }

# trainer leaves too: the last env of the cluster's storage. Its claims are kept with their
# data, as an env's own are (issue #18 C), shown once as the shared objects they are, each with
# the flag that would delete it; apply deletes trainer's workload and keeps them.
sed -i '/^env trainer {$/,/^}$/d' lab.mlenv
git commit -qam "no trainer"
"$mlenvc" plan lab.mlenv > third.out 2> third.err || { cat third.err; fail "third plan"; }
grep -q '^  = lab/_shared/PersistentVolumeClaim/lab-workspace$' third.out ||
  { cat third.out; fail "the last env's leaving does not list the shared claim kept"; }
grep -q 'kept with its data; --allow-destroy=lab/_shared/PersistentVolumeClaim/lab-workspace deletes it$' third.out ||
  { cat third.out; fail "the kept shared claim does not name its flag"; }
grep -q 'PersistentVolumeClaim/scratch-' third.out && fail "scratch's own claim is planned"
: > "$tmp/log"
PATH="$tmp/bin:$PATH" "$mlenvc" apply > apply3.out 2> apply3.err || { cat apply3.err; fail "third apply"; }
grep -q '^argv: oc delete jobs.batch .*metadata.name=trainer ' log ||
  { cat log; fail "apply does not delete trainer's Job"; }
grep -q '^argv: oc delete persistentvolumeclaim' log && { cat log; fail "apply deleted a kept claim"; }
echo "storage_e2e: ok"
