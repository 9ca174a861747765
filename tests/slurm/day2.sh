#!/usr/bin/env bash
# Run by cluster.sh: the day-2 life of Slurm envs on the test cluster, through mlenvc.
#   apply submits every env; status shows a running job's state and each rank's node; logs shows
#   both ranks' lines with their rank; shell opens a shell on rank 1's node inside the job; sync
#   is E0755; results reads rank 0's results.json (claiming no GPU the self-test never
#   measured) and says a run that is no acceptance run has none; an unchanged apply keeps the
#   job; a changed env's apply cancels the old job before submitting the new one; an env removed
#   from the plan and `mlenvc destroy` cancel the recorded job, whose logs stay readable.
# Slurm behaviour relied on (Slurm 22.05 man pages, https://slurm.schedmd.com/):
#   squeue(1) `-t all` lists jobs in every state, finished ones too until slurmctld forgets
#     them after MinJobAge (300 s in cluster.sh); `%T` is the state, `%N` the node list;
#   scontrol(1) `show hostnames` expands a node list, one name a line, in node order, so the
#     N-th name runs the task with SLURM_NODEID N (one task per node);
#   srun(1) `-l, --label` prepends the task number to each line of stdout/err (`1: text`);
#     `--jobid` runs a step inside a running job, `--overlap` lets it share the job's
#     resources with the running step;
#   scancel(1) ends a pending or running job, which squeue then shows CANCELLED.
# Usage: cluster.sh day2.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE EXPECTED_E0755
set -euo pipefail
mlenvc=$1 boot=$2 template=$3 expected=$4
repo=$MLENV_SLURM_DIR/day2-repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
export MLENV_BOOT=$boot
fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "$0")/free_port.sh"
ports=()
while [ "${#ports[@]}" -lt 4 ]; do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
render() {  # render SLEEP_SECONDS [WITHOUT_SPARE]
  sed -e "s/@RDZV_PORT@/${ports[0]}/" -e "s/@MASTER_PORT@/${ports[1]}/" \
      -e "s/@SPARE_PORT@/${ports[2]}/" -e "s/@ACCEPT_PORT@/${ports[3]}/" -e "s/@SLEEP@/$1/" \
      "$template" >day2.mlenv
  if [ -n "${2:-}" ]; then
    awk '/^env spare/ {skip = 1} skip && /^}/ {skip = 0; next} !skip' day2.mlenv >d && mv d day2.mlenv
  fi
  git add day2.mlenv && git commit -qm "day2: $*"
  "$mlenvc" plan day2.mlenv >plan.out 2>&1 || { cat plan.out; fail "plan"; }
}
job_of() { git log -1 --format=%B "refs/mlenv/applied/testlab/$1" | sed -n 's/^Slurm-Job: //p'; }
state_of() { squeue -h -t all -j "$1" -o %T; }
wait_state() {  # wait_state JOB STATE
  for _ in $(seq 1 300); do [ "$(state_of "$1")" = "$2" ] && return; sleep 0.1; done
  fail "job $1 is $(state_of "$1"), not $2"
}
wait_grep() {  # wait_grep PATTERN FILE
  for _ in $(seq 1 300); do grep -q "$1" "$2" 2>/dev/null && return; sleep 0.1; done
  fail "no '$1' in $2"
}

render 600
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "first apply"; }
sleeper=$(job_of sleeper) spare=$(job_of spare) accept=$(job_of accept)
[ -n "$sleeper" ] && [ -n "$spare" ] && [ -n "$accept" ] || { cat apply.out; fail "a job id is not recorded"; }
wait_state "$sleeper" RUNNING
wait_state "$spare" RUNNING

# status: the job's state and each rank's node.
"$mlenvc" status sleeper >status.out 2>&1 || { cat status.out; fail "status"; }
cat status.out
grep -q "^testlab/sleeper (Slurm job $sleeper, run, 2 nodes)$" status.out || fail "status header"
grep -Eq '^  0 +n1 +RUNNING$' status.out || fail "rank 0 on n1"
grep -Eq '^  1 +n2 +RUNNING$' status.out || fail "rank 1 on n2"

# logs: both ranks, each line with its rank; --rank keeps one; stderr's lines too.
log=plans/testlab/sleeper/logs/sleeper-$sleeper.out
wait_grep "^0: hello from rank 0" "$log"
wait_grep "^1: hello from rank 1" "$log"
wait_grep "^1: rank 1 to stderr" "plans/testlab/sleeper/logs/sleeper-$sleeper.err"
"$mlenvc" logs sleeper >logs.out 2>&1 || { cat logs.out; fail "logs"; }
cat logs.out
grep -qx '\[0\] hello from rank 0 on n1' logs.out || fail "rank 0's line"
grep -qx '\[1\] hello from rank 1 on n2' logs.out || fail "rank 1's line"
grep -qx '\[1\] rank 1 to stderr' logs.out || fail "rank 1's stderr line"
"$mlenvc" logs sleeper --rank 1 >logs1.out 2>&1 || { cat logs1.out; fail "logs --rank 1"; }
grep -q '^\[0\]' logs1.out && fail "--rank 1 shows rank 0"
grep -qx '\[1\] hello from rank 1 on n2' logs1.out || fail "--rank 1 lost its line"
# -f follows until the job ends: it is cancelled below, when the env changes.
"$mlenvc" logs sleeper -f >follow.out 2>&1 &
follow=$!

# shell: a login shell on rank 1's node, inside the job (stdin is not a terminal here).
echo 'echo "shell on $SLURMD_NODENAME in job $SLURM_JOB_ID"' |
  "$mlenvc" shell sleeper --rank 1 >shell.out 2>&1 || { cat shell.out; fail "shell"; }
grep -qx "shell on n2 in job $sleeper" shell.out || { cat shell.out; fail "shell on rank 1's node"; }

# sync reaches into pods: a clear error on Slurm.
if "$mlenvc" sync sleeper . >sync.out 2>&1; then fail "sync succeeded on Slurm"; fi
grep -qF "$(cat "$expected")" sync.out || { cat sync.out; fail "sync's E0755"; }
if "$mlenvc" dev-session sleeper . >dev.out 2>&1; then fail "dev-session succeeded on Slurm"; fi
grep -q 'error\[E0755\]: `mlenvc dev-session`' dev.out || { cat dev.out; fail "dev-session's E0755"; }

# results: rank 0 of the acceptance run wrote results.json beside the job's logs. The test
# cluster has no GPU (and this mlenv-boot may have no NCCL), so the result is an error, shown as
# such (exit status 1).
wait_state "$accept" FAILED
status=0
"$mlenvc" results accept >results.out 2>&1 || status=$?
cat results.out
[ "$status" = 1 ] || fail "results exited $status"
grep -q '^testlab/accept: no GPU measured on 2 nodes: the NCCL self-test did not run' results.out ||
  fail "results claims GPUs the self-test never measured"
grep -q 'GPUs' results.out && fail "results names a GPU count"
grep -q '^ERROR: --nccl-check: ' results.out || fail "results shows no error"
# A run that is no acceptance run has no result, and results says so rather than "not yet".
status=0
"$mlenvc" results sleeper >results.out 2>&1 || status=$?
cat results.out
[ "$status" = 1 ] || fail "results of a run exited $status"
grep -q 'error\[E0716\]: `testlab/sleeper` is a run env, not an acceptance run: it has no result' results.out ||
  fail "results of a run does not say it is no acceptance run"
grep -q 'mlenvc logs sleeper' results.out || fail "results of a run does not point to logs"

# An unchanged apply keeps the running job.
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "unchanged apply"; }
grep -qx "testlab/sleeper: unchanged, Slurm job $sleeper" apply.out || { cat apply.out; fail "not unchanged"; }
grep -q '^Submitting' apply.out && { cat apply.out; fail "an unchanged env was submitted again"; }
[ "$(job_of sleeper)" = "$sleeper" ] || fail "the record moved"
[ "$(state_of "$sleeper")" = RUNNING ] || fail "the unchanged job is $(state_of "$sleeper")"

# An edit of the source that changes no file a job runs from (a comment): the jobs stay.
echo '// reviewed' >>day2.mlenv
git commit -qam "a comment" && "$mlenvc" plan day2.mlenv >plan.out 2>&1 || { cat plan.out; fail "plan"; }
grep -q 'SlurmJob' plan.out && { cat plan.out; fail "a comment replaces a job"; }
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply after a comment"; }
grep -qx "testlab/sleeper: unchanged, Slurm job $sleeper" apply.out || { cat apply.out; fail "a comment resubmitted"; }
[ "$(job_of sleeper)" = "$sleeper" ] || fail "the record moved"

# A changed env replaces its job: the plan says so, and apply cancels the old job, then submits.
render 601
grep -qx -- '-/+ testlab/sleeper/SlurmJob/sleeper' plan.out || { cat plan.out; fail "plan: no replace"; }
grep -q 'forces replacement: run spec changed' plan.out || { cat plan.out; fail "plan: no reason"; }
grep -q 'SlurmJob/spare' plan.out && { cat plan.out; fail "plan: the unchanged spare changes"; }
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "changed apply"; }
cat apply.out
grep -q "^Replacing testlab/sleeper (run spec changed): cancelling Slurm job $sleeper" apply.out ||
  fail "no replace"
wait_state "$sleeper" CANCELLED
replaced=$(job_of sleeper)
[ "$replaced" != "$sleeper" ] || fail "no new job"
[ "$(job_of spare)" = "$spare" ] || fail "the unchanged spare was resubmitted"
wait_state "$replaced" RUNNING
for _ in $(seq 1 100); do kill -0 "$follow" 2>/dev/null || break; sleep 0.1; done
kill -0 "$follow" 2>/dev/null && fail "logs -f did not end with the job"
wait "$follow" || fail "logs -f failed"
grep -qx '\[0\] hello from rank 0 on n1' follow.out || { cat follow.out; fail "logs -f rank 0"; }
grep -qx '\[1\] hello from rank 1 on n2' follow.out || { cat follow.out; fail "logs -f rank 1"; }

# An env removed from the plan: apply cancels its job and records it destroyed.
render 601 without-spare
grep -qx -- '  - testlab/spare/SlurmJob/spare' plan.out || { cat plan.out; fail "plan: spare's job stays"; }
"$mlenvc" apply >apply.out 2>&1 || { cat apply.out; fail "apply without spare"; }
cat apply.out
wait_state "$spare" CANCELLED
[ -z "$(git ls-tree "refs/mlenv/applied/testlab/spare")" ] || fail "spare's record is not destroyed"

# destroy: the recorded job is cancelled; the env's files stay, and an --allow-destroy (there
# is no claim to delete) is E0705 before anything runs.
status=0
"$mlenvc" destroy sleeper --allow-destroy=testlab/sleeper/PersistentVolumeClaim/x >destroy.out 2>&1 || status=$?
[ "$status" = 1 ] && grep -q 'error\[E0705\]' destroy.out || { cat destroy.out; fail "destroy --allow-destroy on Slurm"; }
"$mlenvc" destroy sleeper >destroy.out 2>&1 || { cat destroy.out; fail "destroy"; }
cat destroy.out
grep -q "^Keeping plans/testlab/sleeper/ (logs/, workspace/) and the cluster's workspace_dir" destroy.out ||
  fail "destroy does not say it keeps the env's files"
wait_state "$replaced" CANCELLED
status=0
"$mlenvc" status sleeper >status.out 2>&1 || status=$?
grep -q 'E0750' status.out || { cat status.out; fail "a destroyed env still has a status"; }
# Its logs are files on disk, and stay readable after destroy.
"$mlenvc" logs sleeper >logs.out 2>&1 || { cat logs.out; fail "logs of a destroyed env"; }
grep -qx '\[0\] hello from rank 0 on n1' logs.out || { cat logs.out; fail "destroyed: rank 0's line"; }
grep -qx '\[1\] hello from rank 1 on n2' logs.out || { cat logs.out; fail "destroyed: rank 1's line"; }
echo "status, logs (-f), shell, results, unchanged and replaced applies, removal, destroy and logs after it on Slurm"
