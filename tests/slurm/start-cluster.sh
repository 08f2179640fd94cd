#!/usr/bin/env bash
# Starts a real single-node Slurm cluster on this machine for the batch tests: Debian's
# slurmctld, slurmd and munge, configured for this host, with state in a temp directory.
# Needs root (it installs packages and writes /etc/slurm/slurm.conf). Idempotent: when the
# node already answers `sinfo` as idle it does nothing. Prints the state directory.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "start-cluster.sh: needs root (installs Debian's slurm packages, starts daemons)" >&2
  exit 2
fi

# Four jobs share a core. The tests' array tasks are agent runs that wait on a scripted
# LLM, so on 2 cores eight at a time finish a 50-task array in about 17 s instead of 70 s,
# two at a time.
oversubscribe=FORCE:4

if command -v sinfo >/dev/null 2>&1 && sinfo -h -o '%T' 2>/dev/null | grep -qx idle &&
  scontrol show partition debug 2>/dev/null | grep -q "OverSubscribe=$oversubscribe"; then
  echo "start-cluster.sh: the cluster is already up" >&2
  exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >&2
fi

host=$(hostname -s)
cores=$(nproc)
state=${DELTA_SLURM_STATE:-$(mktemp -d /tmp/delta-slurm.XXXXXX)}
mkdir -p "$state/ctld" "$state/d" "$state/log"

# munged runs as munge, refuses a log or run directory it does not own, and needs a key.
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
  runuser -u munge -- /usr/sbin/munged
fi

mkdir -p /etc/slurm
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=delta-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
NodeName=$host CPUs=$cores State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=$oversubscribe
CONF

if pgrep -x slurmctld >/dev/null; then
  scontrol reconfigure
else
  slurmctld
fi
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
    echo "$state"
    exit 0
  fi
  sleep 0.5
done
echo "start-cluster.sh: the node did not become idle in 30 s; logs in $state/log:" >&2
tail -n 20 "$state"/log/*.log >&2 || true
sinfo >&2 || true
exit 1
