#!/usr/bin/env bash
# Run by cluster.sh: `mlenvc apply --wait` of two changed Slurm envs submits both, then waits
# for both: the second env is submitted before the first one's job ends (one long job holds no
# other env back), and apply reports each job's end and exits 0 when both completed.
# Usage: cluster.sh wait_all.sh MLENVC MLENV_BOOT PROGRAM_TEMPLATE
set -euo pipefail
mlenvc=$1 boot=$2 template=$3
repo=$MLENV_SLURM_DIR/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "$0")/free_port.sh"
mapfile -t ports < <(free_ports 4)
sed -e "s/@LONG_RDZV@/${ports[0]}/" -e "s/@LONG_MASTER@/${ports[1]}/" \
  -e "s/@SHORT_RDZV@/${ports[2]}/" -e "s/@SHORT_MASTER@/${ports[3]}/" "$template" >wait_all.mlenv
git add wait_all.mlenv && git commit -qm "two envs on the test cluster"
"$mlenvc" plan wait_all.mlenv >plan.out 2>&1 || { cat plan.out; fail "plan"; }
export MLENV_BOOT=$boot
"$mlenvc" apply --wait >apply.out 2>&1 || { cat apply.out; fail "apply --wait"; }
cat apply.out
long=$(sed -n 's/^Submitted testlab\/long as Slurm job \([0-9]*\)$/\1/p' apply.out)
short=$(sed -n 's/^Submitted testlab\/short as Slurm job \([0-9]*\)$/\1/p' apply.out)
[ -n "$long" ] && [ -n "$short" ] || fail "apply did not submit both envs"
# Both submissions come before either job's end: apply waited for none before submitting all.
line() { grep -n -- "$1" apply.out | head -n 1 | cut -d: -f1 || true; }
long_submit=$(line "^Submitted testlab/long ")
short_submit=$(line "^Submitted testlab/short ")
long_end=$(line "^testlab/long: job $long COMPLETED")
short_end=$(line "^testlab/short: job $short COMPLETED")
[ -n "$long_end" ] && [ -n "$short_end" ] || fail "apply --wait did not report both jobs' ends"
for submit in "$long_submit" "$short_submit"; do
  [ "$submit" -lt "$long_end" ] && [ "$submit" -lt "$short_end" ] ||
    fail "an env was submitted only after another env's job ended"
done
[ -f plans/testlab/long/long.txt ] && [ -f plans/testlab/short/short.txt ] || fail "a job did not run"
echo "apply --wait submitted both envs (jobs $long and $short), then waited for both"
