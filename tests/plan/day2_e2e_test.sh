#!/bin/sh
# The day-2 commands end to end through the mlenvc binary: the barcelona example planned for
# real (its plan.json `nodes`, `storage` and `ports` as the target writes them), applied against
# the recording oc stand-in, then each command's --help, its exact oc calls and its errors.
# usage: day2_e2e_test.sh MLENVC EXAMPLES_DIR FAKE_KUBECTL RECORDED_DIR
set -eu
mlenvc=$1 examples=$2 fake=$3 recorded=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
git init -q -b main . && git config user.email t@example.com && git config user.name Test
cp "$examples/barcelona.mlenv" cluster.mlenv
git add cluster.mlenv && git commit -qm sources
"$mlenvc" plan cluster.mlenv > /dev/null 2>&1 || fail "plan"
grep -q '"storage": "per_pod"' plans/barcelona/ml-dev-env/plan.json || fail "no storage in plan.json"

mkdir bin && ln -s "$fake" bin/oc
export PATH="$tmp/bin:$PATH" MLENV_FAKE_LOG="$tmp/log" MLENV_FAKE_REPLIES="$tmp/replies"
export MLENV_FAKE_SERVER=https://api.barcelona.nerc.mghpcc.org:6443
printf '%s\n' 'get namespace|0|namespace/nccl-test' 'auth can-i|0|yes' \
  'get istag|0|image-registry.openshift-image-registry.svc:5000/nccl-test/ml-dev-env@sha256:0000000000000000000000000000000000000000000000000000000000000000' \
  > replies
"$mlenvc" status ml-dev-env 2> status.err && fail "status of an env not applied"
grep -q 'error\[E0750\]: `barcelona/ml-dev-env` is not applied' status.err || fail "no E0750"
"$mlenvc" apply > /dev/null || fail "apply"

for command in status shell logs sync port-forward urls dev-session; do
  "$mlenvc" "$command" --help | grep -q "^usage: mlenvc $command" || fail "$command --help"
done
"$mlenvc" --help | grep -q '^  port-forward  ' || fail "port-forward not listed"
"$mlenvc" --help | grep -q '^  dev-session   ' || fail "dev-session not listed"
"$mlenvc" explain E0750 | grep -q 'refs/mlenv/applied' || fail "explain E0750"

printf '%s\n' "get pods|0|@$recorded/pods_job.json" "get routes|0|@$recorded/routes.json" > replies
: > log
"$mlenvc" port-forward barcelona/ml-dev-env > /dev/null || fail "port-forward"
"$mlenvc" port-forward ml-dev-env tensorboard --local 16006 > /dev/null || fail "port-forward tb"
mkdir work && echo 'print(1)' > work/train.py
"$mlenvc" sync ml-dev-env work > /dev/null || fail "sync"
"$mlenvc" urls ml-dev-env > urls.out || fail "urls"
grep -q '^ml-dev-env-vscode  https://ml-dev-env-vscode-nccl-test.apps.barcelona.example.com$' \
  urls.out || fail "no vscode URL"
pods='argv: oc get pods -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json'
# Each command first asks which server the client points at (E0719 unless the cluster's api).
server='argv: oc whoami --show-server'
cat > expected <<EOT
$server
$pods
argv: oc port-forward -n nccl-test pod/ml-dev-env-0-x7k2p 5678:5678
$server
$pods
argv: oc port-forward -n nccl-test pod/ml-dev-env-0-x7k2p 16006:6006
$server
$pods
argv: oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0-x7k2p:/workspace
argv: oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-1-q9w8e:/workspace
$server
argv: oc get routes -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json
EOT
diff expected log || fail "unexpected oc calls"

: > log
"$mlenvc" shell ml-dev-env --rank 2 2> shell.err && fail "shell --rank 2 of 2 nodes"
grep -q 'error\[E0751\]: `barcelona/ml-dev-env` has no rank 2' shell.err || fail "no E0751"
"$mlenvc" shell ml-dev-env --rank two 2> shell.err && fail "shell --rank two"
grep -q -- '--rank is a number, not `two`' shell.err || fail "no --rank error"
"$mlenvc" logs nowhere 2> logs.err && fail "logs of an unknown env"
grep -q 'error\[E0715\]: no committed plan has env `nowhere`' logs.err || fail "no E0715"
"$mlenvc" port-forward ml-dev-env ssh 2> pf.err && fail "port-forward to an unknown port"
grep -q '= note: `vscode`: 8080' pf.err || fail "E0753 does not list the ports"
[ ! -s log ] || fail "a refused command ran oc"
"$mlenvc" dev-session ml-dev-env 2> ds.err && fail "dev-session without DIR"
grep -q '^mlenvc dev-session: missing arguments' ds.err || fail "dev-session usage error"
"$mlenvc" dev-session ml-dev-env nowhere 2> ds.err && fail "dev-session of a missing DIR"
grep -q 'error\[E0754\]: `nowhere` is not a directory' ds.err || fail "no E0754"
[ ! -s log ] || fail "a refused command ran oc"

# make dev-session in one command: the forward and the watch run until SIGTERM, which ends
# both; the forward (the stand-in, sleeping until stopped) is not left behind.
printf '%s\n' "get pods|0|@$recorded/pods_job.json" > replies
MLENV_FAKE_SLEEP=60 MLENV_FAKE_SLEEP_ON=port-forward MLENV_FAKE_PIDS="$tmp/pids" \
  "$mlenvc" dev-session barcelona/ml-dev-env work > ds.out 2> ds.err &
session=$!
tries=0
until [ -s pids ] && grep -q 'rsync.*ml-dev-env-1-q9w8e' log; do
  tries=$((tries + 1))
  [ "$tries" -lt 200 ] || { kill "$session"; fail "dev-session did not start"; }
  sleep 0.05
done
kill -TERM "$session"
wait "$session" || fail "dev-session did not end with status 0 on SIGTERM: $(cat ds.err)"
for pid in $(cat pids); do
  ! kill -0 "$pid" 2>/dev/null || fail "the port-forward (pid $pid) was left behind"
done
grep -q '^Dev session of barcelona/ml-dev-env stopped$' ds.out || fail "no end of session"
cat > expected <<EOT
$server
$pods
$pods
argv: oc port-forward -n nccl-test pod/ml-dev-env-0-x7k2p 5678:5678
argv: oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0-x7k2p:/workspace
argv: oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-1-q9w8e:/workspace
EOT
# The forward runs beside the sync: its place in the log is the scheduler's.
sort expected > expected.sorted && sort log > log.sorted
diff expected.sorted log.sorted || fail "unexpected oc calls of dev-session"
# --context reaches every client call of a day-2 command as one argument, as apply's does, and
# a value that is no context name never becomes an option.
printf '%s\n' "get pods|0|@$recorded/pods_job.json" "get routes|0|@$recorded/routes.json" > replies
: > log
"$mlenvc" urls ml-dev-env --context admin@barcelona > /dev/null || fail "urls --context"
"$mlenvc" sync ml-dev-env work --context=admin@barcelona > /dev/null || fail "sync --context"
[ -s log ] || fail "urls --context ran no client"
grep -v '^argv: oc --context=admin@barcelona ' log | grep -q '^argv: ' &&
  { cat log; fail "a day-2 call without --context"; }
# The client pointed at another cluster: refused after its one question, naming both hosts.
: > log
MLENV_FAKE_SERVER=https://api.staging.example.com:6443 "$mlenvc" logs ml-dev-env 2> other.err &&
  fail "logs on another cluster"
grep -q 'error\[E0719\]: the client.s current server is `api.staging.example.com`, not `api.barcelona.nerc.mghpcc.org`' \
  other.err || fail "no E0719: $(cat other.err)"
[ "$(cat log)" = "$server" ] || fail "logs on another cluster ran: $(cat log)"
"$mlenvc" status ml-dev-env --context=--server=evil 2> ctx.err && fail "--context=--server=evil"
grep -q 'is not a kubeconfig context name' ctx.err || fail "--context's error: $(cat ctx.err)"
echo "day2 e2e: ok"
