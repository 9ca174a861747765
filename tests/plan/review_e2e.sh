#!/bin/sh
# What a reviewer reads, through the mlenvc binary in temporary git repositories: a one-env
# change commits only that env's files (a three-env lab, and a 200-env fleet), SR-IOV
# attachments the envs share appear once under their cluster and are not deleted while an env
# keeps them, an uncommitted source is warned about in text, JSON and Markdown, and the
# transport decision of `network = auto` is printed.
# usage: review_e2e.sh MLENVC EXAMPLES_DIR
set -eu
mlenvc=$1 examples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
new_repo() {
  mkdir "$1" && cd "$1"
  git init -q -b main . && git config user.email t@example.com && git config user.name Test
}
# Every path of the last commit is under $1 or is the program's inputs file $2.
only_changed() {
  git diff --name-only HEAD~1 HEAD > changed
  [ -s changed ] || fail "the last commit changed nothing"
  grep -q "^$1" changed || fail "nothing under $1 changed"
  if grep -v -e "^$1" -e "^$2\$" changed; then fail "files outside $1 changed (listed above)"; fi
}

# A lab: barcelona (four SR-IOV rails) with three envs.
new_repo "$tmp/lab"
cp "$examples/barcelona.mlenv" lab.mlenv
for env in beta gamma; do
  printf '\nenv %s {\n  cluster  = barcelona\n  image    = ml-dev-env\n  nodes    = 2 // %s\n  network  = rdma\n  services = [vscode]\n}\n' \
    "$env" "$env" >> lab.mlenv
done
git add lab.mlenv && git commit -qm lab
"$mlenvc" plan lab.mlenv > first.out 2> first.err || { cat first.err; fail "first plan"; }
[ "$(grep -c '^  + barcelona/_shared/NetworkAttachmentDefinition/' first.out)" = 4 ] ||
  fail "the four shared attachments are not shown once each"
grep 'NetworkAttachmentDefinition' first.out | grep -v '/_shared/' && fail "an attachment under an env"
[ -f plans/_inputs/lab.mlenv.json ] || fail "no program inputs file"
grep -q '"inputs":' plans/barcelona/beta/plan.json && fail "plan.json still lists the program's inputs"
grep -q '"inputs_sha256": "[0-9a-f]\{64\}"' plans/barcelona/beta/plan.json || fail "no inputs_sha256"

sed -i 's|^  nodes    = 2 // beta$|  nodes    = 1 // beta|' lab.mlenv
git commit -qam "beta: one node"
"$mlenvc" plan lab.mlenv > second.out 2> second.err || { cat second.err; fail "second plan"; }
only_changed plans/barcelona/beta/ plans/_inputs/lab.mlenv.json
grep -q '^      ~ spec.replicas: 2 -> 1$' second.out || fail "the edit is not in the summary"
grep -q 'warning\[W0601\]' second.err && fail "a committed source was warned about"

# A source changed without a new plan: apply refuses the one env whose inputs changed, naming
# the file, and only that env.
sed -i 's|^  nodes    = 1 // beta$|  nodes    = 2 // beta|' lab.mlenv
git commit -qam "beta: two nodes, not planned"
set +e
"$mlenvc" apply --dry-run > stale.out 2> stale.err; status=$?
set -e
[ "$status" = 1 ] || fail "apply of a stale plan exited $status"
grep -q '^mlenvc: error\[E0702\]: the plan in `plans/barcelona/beta` is stale$' stale.err ||
  { cat stale.err; fail "E0702 missing for beta"; }
grep -q 'note: input `lab.mlenv` changed' stale.err || fail "the changed input is not named"
[ "$(grep -c 'E0702' stale.err)" = 1 ] || fail "an env whose inputs did not change was refused"
"$mlenvc" plan lab.mlenv > /dev/null 2>&1 || fail "plan after the stale apply"

# gamma leaves: the attachments stay for the envs that keep them.
sed -i '/^env gamma {$/,/^}$/d' lab.mlenv
git commit -qam "no gamma"
"$mlenvc" plan lab.mlenv > third.out 2>&1 || fail "third plan"
grep -q '^  - barcelona/gamma/StatefulSet/gamma$' third.out || fail "gamma's StatefulSet not deleted"
grep -q 'NetworkAttachmentDefinition' third.out && fail "a shared attachment shown as deleted"

# An uncommitted source: a clear warning in every format; the plan still shows the change.
sed -i 's|^  nodes    = 2 // beta$|  nodes    = 1 // beta|' lab.mlenv
"$mlenvc" plan lab.mlenv --no-commit > dirty.out 2> dirty.err || fail "plan of a dirty source"
grep -q '^mlenvc: warning\[W0601\]: `lab.mlenv` differs from HEAD: this plan was rendered from a source the commit does not hold$' dirty.err ||
  { cat dirty.err; fail "no warning in text"; }
"$mlenvc" plan lab.mlenv --no-commit --format=json > dirty.json 2> /dev/null || fail "json plan"
grep -q '"warnings":\["`lab.mlenv` differs from HEAD' dirty.json || fail "no warning in JSON"
"$mlenvc" plan lab.mlenv --no-commit --format=markdown > dirty.md 2> /dev/null || fail "markdown plan"
grep -q '^> \[!WARNING\]$' dirty.md || fail "no warning in Markdown"
grep -q '^\*\*Plan: 0 to create, 2 to update, 0 to replace, 0 to delete.\*\*$' dirty.md ||
  fail "no counts in Markdown"
grep -q '^<details><summary>' dirty.md || fail "no collapsible changes in Markdown"
git checkout -q lab.mlenv

# The transport decision of `network = auto` is printed, in text and JSON.
new_repo "$tmp/tcp"
cp "$examples/tcp-cluster.mlenv" tcp.mlenv
git add tcp.mlenv && git commit -qm tcp
"$mlenvc" plan tcp.mlenv > tcp.out 2> tcp.err || fail "tcp plan"
grep -q '^note: lab/trainer: network = auto: cluster `lab` has no RDMA rails, using TCP$' tcp.err ||
  { cat tcp.err; fail "the TCP fallback is not printed"; }
"$mlenvc" plan tcp.mlenv --format=markdown > tcp.md 2> /dev/null || fail "markdown"
grep -q 'has no RDMA rails, using TCP' tcp.md || fail "the TCP fallback is not in Markdown"

# A fleet of 200 envs over 4 clusters: one env's change is one env's commit.
new_repo "$tmp/fleet"
{
  echo 'import "std/profiles/h100"'
  echo 'import "std/images/pytorch"'
  for c in 0 1 2 3; do
    printf 'cluster c%s extends h100.node4 {\n  api = "api.c%s.example.com"\n  namespace = "ns-c%s"\n' "$c" "$c" "$c"
    printf '  storage {\n    mode = per_pod\n    class = "ceph-rbd"\n  }\n}\n'
  done
  i=0
  while [ $i -lt 200 ]; do
    printf 'env e%s {\n  cluster = c%s\n  image = pytorch.pytorch29\n  nodes = 2 // e%s\n  network = auto\n}\n' "$i" $((i % 4)) "$i"
    i=$((i + 1))
  done
} > fleet.mlenv
git add fleet.mlenv && git commit -qm fleet
"$mlenvc" plan fleet.mlenv > /dev/null 2> fleet.err || { cat fleet.err; fail "fleet plan"; }
sed -i 's|^  nodes = 2 // e117$|  nodes = 1 // e117|' fleet.mlenv
git commit -qam "e117: one node"
"$mlenvc" plan fleet.mlenv > fleet2.out 2> /dev/null || fail "fleet re-plan"
only_changed plans/c1/e117/ plans/_inputs/fleet.mlenv.json
# Notes are grouped, one line per decision naming five envs and a count; JSON keeps every one.
[ "$(grep -c 'note: .* and 45 more: network = auto: cluster `c.` has no RDMA rails, using TCP$' fleet.err)" = 4 ] ||
  fail "the transport notes are not grouped per cluster"
"$mlenvc" plan fleet.mlenv --format=json > fleet.json 2> /dev/null || fail "fleet JSON"
[ "$(grep -o '{"subject":"c[0-9]/e[0-9]*","text":"network = auto: cluster `c[0-9]` has no RDMA rails, using TCP"}' fleet.json | wc -l)" = 200 ] ||
  fail "JSON does not keep every note"
"$mlenvc" destroy --help | grep -q '^usage: mlenvc destroy ENV' || fail "destroy --help"
if "$mlenvc" destroy 2> /dev/null; then fail "destroy without ENV succeeded"; fi
echo "review e2e: ok"
