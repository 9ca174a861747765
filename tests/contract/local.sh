#!/usr/bin/env bash
# Apply did exactly what the plan listed (issue 18 B), on platform local, for real: each env's
# nodes are mlenv-boot processes of this machine. Before and after each apply contract.py
# reads which sessions of each env run (run/rank-N.pid, /proc): an env whose sessions ended
# was deleted, one with new sessions created, both is a replace of `<env>/LocalRun/<env>`; that
# must be exactly what the plan's JSON summary listed.
# usage: local.sh MLENVC MLENV_BOOT
set -euo pipefail
mlenvc=$1 boot=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../slurm/free_port.sh"
work=$(mktemp -d)
cleanup() {
  # Whatever the test left running is ended here, by the sessions its envs recorded.
  for pid in "$work"/plans/*/*/run/rank-*.pid; do
    [ -f "$pid" ] && pkill -KILL -s "$(cat "$pid")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
contract_platform=local
ports=()
while [ "${#ports[@]}" -lt 4 ]; do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
contract_run() { MLENV_BOOT=$boot "$mlenvc" "$@"; }

contract_init "$work" "$here/local.mlenv.in" \
  "s/@PORT1@/${ports[0]}/; s/@PORT2@/${ports[1]}/; s/@PORT3@/${ports[2]}/; s/@PORT4@/${ports[3]}/"
contract_plan && contract_apply
contract_what="unchanged" && contract_plan && contract_apply
contract_edit '/^env one/,/^}/ s/"600"/"601"/' "one's command: its nodes restart"
contract_plan && contract_apply
contract_edit '/^env one/,/^}/ s/nodes       = 2/nodes       = 1/' "one shrinks to one node"
contract_plan && contract_apply
contract_edit '/^env two/,/^}/d' "two removed"
contract_plan && contract_apply
contract_destroy one
echo "contract.local: apply did what each plan listed"
