#!/usr/bin/env bash
# A real two-node Slurm on this host, for as long as one command runs:
#   tests/slurm/cluster.sh COMMAND [ARG...]
# starts slurmctld and two slurmd (`slurmd -N n1`, `slurmd -N n2`), both nodes at 127.0.0.1 with
# their own port, waits until sinfo shows both idle, runs COMMAND with SLURM_CONF and
# MLENV_SLURM_DIR (the cluster's temporary directory, shared by both "nodes") exported, and
# tears everything down whatever happens. Exits with COMMAND's status; 77 (skipped) only where
# Debian's slurmctld, slurmd and slurm-client are not installed (`./mlenv deps` installs them).
#
# Settings, from slurm.conf(5) (https://slurm.schedmd.com/slurm.conf.html) for Slurm 22.05:
# AuthType=auth/none and CredType=cred/none need no munge daemon; several slurmd on one host
# need a NodeName each with its own Port, and `slurmd -N NAME` picks the node
# (https://slurm.schedmd.com/programmer_guide.html#multiple_slurmd_support, Debian builds with
# --enable-multiple-slurmd); %n in SlurmdSpoolDir/SlurmdPidFile/SlurmdLogFile keeps the two
# daemons' files apart. No cgroup (proctrack/linuxproc, task/none), so it runs in a container.
set -uo pipefail

for tool in slurmctld slurmd sbatch sinfo scontrol; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool not installed (./mlenv deps slurmctld slurmd slurm-client)"
    exit 77
  fi
done
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/mlenv-slurm.XXXXXX")
pids=()
teardown() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  [ -n "${MLENV_SLURM_KEEP:-}" ] && { echo "kept $dir"; return; }
  rm -rf "$dir"
}
trap teardown EXIT
trap 'exit 130' INT TERM

. "$(dirname "$0")/free_port.sh"
ctld_port=$(free_port)
n1_port=$(free_port)
n2_port=$(free_port)
while [ "$n2_port" = "$n1_port" ] || [ "$n2_port" = "$ctld_port" ]; do n2_port=$(free_port); done
[ "$n1_port" != "$ctld_port" ] || n1_port=$((ctld_port + 1))

user=$(id -un)
cpus=$(nproc)
# Each node offers a quarter of this host's memory: jobs ask for theirs with --mem (the envs'
# `resources.memory`), which Slurm checks against RealMemory (1 MB when not configured).
memory_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 / 4))
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
GresTypes=gpu
NodeName=n1 NodeAddr=127.0.0.1 Port=$n1_port CPUs=$cpus RealMemory=$memory_mb Gres=gpu:1 State=UNKNOWN
NodeName=n2 NodeAddr=127.0.0.1 Port=$n2_port CPUs=$cpus RealMemory=$memory_mb Gres=gpu:1 State=UNKNOWN
PartitionName=test Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
# One GPU per node whose device file is /dev/null: an acceptance run, which check refuses
# without a GPU (E0427), asks for it with --gpus-per-node and runs on this CPU host.
echo "Name=gpu File=/dev/null" >"$dir/gres.conf"
export MLENV_SLURM_DIR=$dir

# -D: stay in the foreground, so the pids are ours to stop; -i: ignore any saved state.
slurmctld -D -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
for node in n1 n2; do
  slurmd -D -N "$node" -f "$SLURM_CONF" >"$dir/log/slurmd-$node.out" 2>&1 &
  pids+=($!)
done

dump_logs() {
  local f
  for f in "$dir"/log/*; do echo "== $f"; tail -n 30 "$f"; done
}
idle_nodes() { sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" {print $1}' | sort -u | wc -l; }
for _ in $(seq 1 300); do
  [ "$(idle_nodes)" = 2 ] && break
  sleep 0.1
done
if [ "$(idle_nodes)" != 2 ]; then
  echo "the test cluster did not come up:"
  sinfo -N 2>&1
  dump_logs
  exit 1
fi

"$@"
status=$?
[ "$status" -eq 0 ] || dump_logs
exit "$status"
