#!/bin/sh
# End to end through the mlenvc binary, in a temporary git repository: plan, edit, plan again
# (the diff shows exactly the edit), --check on fresh and stale plans, a secret value planted in
# the environment appears in no object, and apply against the recording oc stand-in.
# usage: e2e_test.sh MLENVC EXAMPLES_DIR FAKE_KUBECTL
set -eu
mlenvc=$1 examples=$2 fake=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
git init -q -b main . && git config user.email t@example.com && git config user.name Test
cp "$examples/barcelona.mlenv" cluster.mlenv
git add cluster.mlenv && git commit -qm sources

export MLENV_E2E_TOKEN=tok-canary-93b1f0
"$mlenvc" plan cluster.mlenv > first.out 2> first.err || fail "first plan"
# The plan's objects arrive as one pack mlenvc writes itself (compiler/plan/pack_file.h): git
# reads it as its own (gitformat-pack(5)): every object whole and hashed right, the index true.
git fsck --full --strict 2> fsck.err || { cat fsck.err; fail "git fsck of the plan's pack"; }
for idx in .git/objects/pack/*.idx; do
  git verify-pack "$idx" || fail "git verify-pack $idx"
done
[ "$(git cat-file -p HEAD:plans/barcelona/ml-dev-env/boot.json)" = "$(cat plans/barcelona/ml-dev-env/boot.json)" ] ||
  fail "boot.json in the commit differs from the work tree"
grep -q '^  + barcelona/ml-dev-env/StatefulSet/ml-dev-env$' first.out || fail "StatefulSet not created"
grep -q '^note: the platform team applies barcelona/_admin/ once (mlenvc apply --admin)' first.err ||
  fail "no note for the platform team"
# The cookie Secret is apply's to create (plan.json `secrets`), never a chore for people.
grep -q 'Secret' first.err && fail "a note asks people to create a Secret"
grep -q '"name": "ml-dev-env-oauth-cookie"' plans/barcelona/ml-dev-env/plan.json ||
  fail "plan.json does not list the cookie Secret"
"$mlenvc" plan cluster.mlenv --check > /dev/null || fail "--check on a fresh plan"
"$mlenvc" plan cluster.mlenv --format=json > eq.json || fail "plan --format=json"
grep -q '"notes":\["the platform team applies' eq.json || fail "no notes in the JSON summary"
# An option's value may follow it as the next argument, before or after FILE.
"$mlenvc" plan --format json cluster.mlenv > space.json || fail "plan --format json FILE"
cmp -s eq.json space.json || fail "--format json differs from --format=json"

sed -i 's/^  nodes    = 2$/  nodes    = 1/' cluster.mlenv
git commit -qam "one node"
set +e
"$mlenvc" plan cluster.mlenv --check > /dev/null 2> check.err; status=$?
set -e
[ "$status" = 1 ] || fail "--check on a stale plan exited $status"
grep -q 'error\[E0606\]' check.err || fail "E0606 missing"
set +e
"$mlenvc" plan cluster.mlenv --detailed-exitcode > second.out; status=$?
set -e
[ "$status" = 2 ] || fail "--detailed-exitcode with changes exited $status"
grep -q '^      ~ spec.replicas: 2 -> 1$' second.out || fail "the edit is not in the summary"
# Per-pod storage: the claim of the pod that goes stays, and the plan says so.
grep -q '^      # scaling down from 2 to 1 pods leaves the claims workspace-ml-dev-env-1 and datasets-ml-dev-env-1 with their data (whenScaled: Retain); apply keeps them$' \
  second.out || fail "the scale-down does not name the claim it leaves"
git log -1 --format=%B | grep -q 'spec.replicas: 2 -> 1' || fail "summary not in the commit message"
[ -z "$(git status --porcelain -- plans)" ] || fail "plan directory not clean after plan"

git cat-file --batch-all-objects --batch | grep -q "$MLENV_E2E_TOKEN" && fail "a secret value was committed"

mkdir bin && ln -s "$fake" bin/oc
export MLENV_FAKE_LOG="$tmp/log" MLENV_FAKE_REPLIES="$tmp/replies"
# The cluster's api is the host of the client's current server, which apply checks first.
export MLENV_FAKE_SERVER=https://api.barcelona.nerc.mghpcc.org:6443
printf '%s\n' 'get namespace|0|namespace/nccl-test' 'auth can-i|0|yes' \
  'get istag|0|image-registry.openshift-image-registry.svc:5000/nccl-test/ml-dev-env@sha256:0000000000000000000000000000000000000000000000000000000000000000' \
  > "$tmp/replies"
PATH="$tmp/bin:$PATH" "$mlenvc" apply --dry-run > dry.out || fail "dry run"
[ ! -e "$tmp/log" ] || fail "dry run ran a command"
PATH="$tmp/bin:$PATH" "$mlenvc" apply --timeout 90s > apply.out || fail "apply --timeout 90s"
head -n 1 log | grep -qx 'argv: oc whoami --show-server' || fail "apply did not check the server first"
grep -q '^argv: oc apply --server-side --field-manager=mlenvc' log || fail "no server-side apply"
grep -q "^argv: oc start-build ml-dev-env --from-dir=.*/mlenv-build-.* --wait -n " log || fail "no build"
# start-build uploads its directory to the cluster: only the env's Dockerfile (at the root,
# where the image's shared BuildConfig finds it) and mlenv-boot's sources, never the whole plan
# tree (other envs' files, Slurm logs).
context=$(grep '^context: ' log | head -n 1)
case "$context" in "context: ./Dockerfile ./_runtime "*" ./_runtime/boot.cc "*) ;; *) fail "$context" ;; esac
case "$context" in *plan.json* | *statefulset*) fail "the whole plan uploaded: $context" ;; esac
grep -q '^argv: oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=90s$' log ||
  fail "no rollout wait bounded by --timeout 90s"
git rev-parse -q --verify refs/mlenv/applied/barcelona/ml-dev-env > /dev/null || fail "no applied ref"

# A plan from a linked work tree (`git worktree add`): its pack goes to the common object
# directory, where git finds the objects of every work tree.
git worktree add -q -b other "$tmp/linked" > /dev/null
sed 's/^  debug    = true$/  debug    = false/' cluster.mlenv > "$tmp/linked/cluster.mlenv"
(cd "$tmp/linked" && git commit -qam "no debugger" && "$mlenvc" plan cluster.mlenv > /dev/null) ||
  fail "plan in a linked work tree"
git fsck --full --strict 2> fsck.err || { cat fsck.err; fail "git fsck after a linked plan"; }
git cat-file -e other:plans/barcelona/ml-dev-env/boot.json || fail "the linked plan's blobs"

# A work tree whose `.git` is a file naming a git directory elsewhere (`--separate-git-dir`, as
# some CI checkouts have): the plan goes into the work tree, not beside the git directory.
mkdir -p "$tmp/gitdirs"
git init -q --separate-git-dir="$tmp/gitdirs/separate.git" "$tmp/checkout"
git -C "$tmp/checkout" config user.email t@example.com
git -C "$tmp/checkout" config user.name Test
cp cluster.mlenv "$tmp/checkout/"
(cd "$tmp/checkout" && git add cluster.mlenv && git commit -qm src &&
  "$mlenvc" plan cluster.mlenv > /dev/null) || fail "plan in a work tree with a .git file"
[ -f "$tmp/checkout/plans/barcelona/ml-dev-env/boot.json" ] || fail "no plan in the work tree"
[ ! -e "$tmp/gitdirs/plans" ] || fail "the plan went beside the git directory"
git -C "$tmp/checkout" cat-file -e HEAD:plans/barcelona/ml-dev-env/boot.json ||
  fail "the plan's commit does not hold plans/"
# A SHA-256 repository, which libgit2 cannot open: said so, not "no git work tree".
if git init -q --object-format=sha256 "$tmp/sha256" 2> /dev/null; then
  cp cluster.mlenv "$tmp/sha256/"
  (cd "$tmp/sha256" && ! "$mlenvc" plan cluster.mlenv > /dev/null 2> err) || fail "plan in a SHA-256 repository"
  grep -q "cannot be opened" "$tmp/sha256/err" || { cat "$tmp/sha256/err"; fail "SHA-256: the reason"; }
fi

# What would fail after the commit is found before it (issue #21 item 9): each case exits 1
# with E0604, and the branch, the index and the work tree's plan are as they were.
unmoved() {  # unmoved CASE: HEAD is still $head and the index still matches it
  [ "$(git rev-parse HEAD)" = "$head" ] || fail "$1: the branch moved"
  git diff --cached --quiet || fail "$1: the index differs from HEAD"
  grep -q 'error\[E0604\]' "$1.err" || { cat "$1.err"; fail "$1: no E0604"; }
}
sed -i 's/^  nodes    = 1$/  nodes    = 2/' cluster.mlenv
git commit -qam "two nodes again"
head=$(git rev-parse HEAD)
# A split index (git update-index --split-index): libgit2 cannot read its `link` extension.
git update-index --split-index
if "$mlenvc" plan cluster.mlenv > /dev/null 2> split.err; then fail "planned into a split index"; fi
unmoved split
git update-index --no-split-index
# `plans` as a regular file where the plan's folder goes.
mv plans plans.away && echo mine > plans
if "$mlenvc" plan cluster.mlenv > /dev/null 2> file.err; then fail "planned through a file"; fi
unmoved file
grep -q '`.*plans` is not a folder' file.err || { cat file.err; fail "the file is not named"; }
[ "$(cat plans)" = mine ] || fail "the user's file changed"
rm plans && mv plans.away plans
# A source whose `_inputs/` file name would pass 255 bytes (each `+` is `%2B` there).
long=$(printf '+%.0s' $(seq 1 100)).mlenv
cp cluster.mlenv "$long" && git add "$long" && git commit -qm "a long name"
head=$(git rev-parse HEAD)
if "$mlenvc" plan "$long" --out plans-long > /dev/null 2> long.err; then fail "planned a name over 255 bytes"; fi
unmoved long
grep -q 'error\[E0604\]: a file name over 255 bytes: `plans-long/_inputs/%2B' long.err || { cat long.err; fail "the long name is not said"; }
git rm -q "$long" && git commit -qm "no long name"
# A sparse index (git sparse-checkout --sparse-index) that leaves the plan outside the cone.
if git sparse-checkout init --cone --sparse-index 2> /dev/null; then
  git sparse-checkout set docs 2> /dev/null
  head=$(git rev-parse HEAD)
  if "$mlenvc" plan cluster.mlenv > /dev/null 2> sparse.err; then fail "planned into a sparse index"; fi
  unmoved sparse
  git sparse-checkout disable
fi

# Nothing of the user's disk in a plan (issue #21 item 8): a source outside the work tree is
# refused (E0605), and a site library import is recorded as MLENV_PATH/<path in its folder>.
away=$(mktemp -d)  # outside the work tree, which is $tmp
trap 'rm -rf "$tmp" "$away"' EXIT
mkdir -p "$away/elsewhere" "$away/site"
cp cluster.mlenv "$away/elsewhere/"
set +e
"$mlenvc" plan "$away/elsewhere/cluster.mlenv" > /dev/null 2> outside.err; status=$?
set -e
[ "$status" = 1 ] || fail "a source outside the work tree was planned (exit $status)"
grep -q 'error\[E0605\]: the source .* is outside the work tree' outside.err || { cat outside.err; fail "E0605 for an outside source"; }
printf 'import "std/images/pytorch"\nimage team extends pytorch.pytorch29 {\n  tag = "team"\n}\n' \
  > "$away/site/teamimg.mlenv"
sed -e 's|^import "std/profiles/h100".*|&\nimport "teamimg"|' -e 's/^  image    = ml-dev-env$/  image    = teamimg.team/' \
  cluster.mlenv > sited.mlenv
git add sited.mlenv && git commit -qm "a site image"
# Its own plan directory: the env's name and namespace are cluster.mlenv's (E0609 otherwise).
MLENV_PATH="$away/site" "$mlenvc" plan sited.mlenv --out plans-sited > sited.out 2>&1 || { cat sited.out; fail "plan with a site import"; }
grep -rq "$away" plans-sited && { grep -rl "$away" plans-sited; fail "a local path in the plan"; }
git log -1 --format=%B | grep -q "$away" && fail "a local path in the commit message"
grep -q '"path": "MLENV_PATH/teamimg.mlenv"' plans-sited/_inputs/sited.mlenv.json ||
  { cat plans-sited/_inputs/sited.mlenv.json; fail "the site import's recorded name"; }
grep -q 'teamimg' sited.out && fail "the site import was called uncommitted"
echo "e2e: ok"
