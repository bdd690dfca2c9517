#!/bin/bash
# A one-machine Slurm cluster from Debian's packages (slurm-wlm, munge), for `make e2e-slurm`
# and for trying deploy/slurm/llmbench.sbatch without a cluster. Runs as root.
#
#   eval "$(deploy/slurm/local-cluster.sh start DIR)"   # prints: export SLURM_CONF=DIR/slurm.conf
#   deploy/slurm/local-cluster.sh stop DIR
set -euo pipefail
cmd=${1:?usage: local-cluster.sh start|stop DIR}
dir=${2:?usage: local-cluster.sh start|stop DIR}
case $cmd in
start)
	command -v slurmctld >/dev/null || { echo "local-cluster.sh: slurmctld not found: apt-get install slurm-wlm munge" >&2; exit 2; }
	mkdir -p "$dir/state" "$dir/spool" /run/munge
	chown munge:munge /run/munge
	if [ ! -f /etc/munge/munge.key ]; then
		dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
		chmod 400 /etc/munge/munge.key
		chown munge:munge /etc/munge/munge.key
	fi
	if ! pgrep -x munged >/dev/null; then
		/usr/sbin/munged --force 2>/dev/null
		sleep 0.2
		pgrep -x munged >"$dir/munged.pid" # ours to stop
	fi
	host=$(hostname -s)
	cpus=$(nproc)
	cat >"$dir/slurm.conf" <<CONF
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/ctld.log
SlurmdLogFile=$dir/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
	export SLURM_CONF=$dir/slurm.conf
	/usr/sbin/slurmctld -f "$SLURM_CONF"
	/usr/sbin/slurmd -f "$SLURM_CONF"
	for _ in $(seq 1 60); do
		if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
			echo "export SLURM_CONF=$SLURM_CONF"
			exit 0
		fi
		sleep 0.5
	done
	echo "local-cluster.sh: the node did not come up idle in 30 s (see $dir/ctld.log, $dir/d.log)" >&2
	exit 1
	;;
stop)
	for f in slurmd slurmctld munged; do
		if [ -f "$dir/$f.pid" ]; then
			# shellcheck disable=SC2046 # one pid a line
			kill $(cat "$dir/$f.pid") 2>/dev/null || true
		fi
	done
	;;
*)
	echo "usage: local-cluster.sh start|stop DIR" >&2
	exit 2
	;;
esac
