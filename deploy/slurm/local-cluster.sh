#!/bin/bash
# A one-machine Slurm cluster from Debian's packages (slurm-wlm, munge), for `make e2e-slurm`
# and for trying deploy/slurm/llmbench.sbatch without a cluster. Runs as root.
#
#   eval "$(deploy/slurm/local-cluster.sh start DIR)"   # prints: export SLURM_CONF=DIR/slurm.conf
#   deploy/slurm/local-cluster.sh stop DIR              # stops what start started, waits until gone
#
# The daemons run in the foreground of their own processes (munged -F, slurmctld -D,
# slurmd -D), so the PID recorded in DIR/pids is the daemon itself, never a parent that forked
# it and exited. `stop` signals exactly those PIDs (and the helpers they started), waits up to
# 30 s for them to exit, then kills what is left. A munged already running is used and left
# alone.
set -euo pipefail
cmd=${1:?usage: local-cluster.sh start|stop DIR}
dir=${2:?usage: local-cluster.sh start|stop DIR}

# started NAME PID: record a daemon this script started.
started() { echo "$1 $2" >>"$dir/pids"; }

# alive PID NAME: PID is a live process whose command is NAME (not a reused PID).
alive() { [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

stop_all() {
	[ -f "$dir/pids" ] || return 0
	local pids=() name pid
	while read -r name pid; do
		alive "$pid" "$name" || continue
		pids+=("$pid")
		# Helpers a daemon forked (slurmctld's slurmscriptd) go with it.
		for c in $(pgrep -P "$pid" 2>/dev/null || true); do pids+=("$c"); done
	done <"$dir/pids"
	[ ${#pids[@]} -eq 0 ] || kill -TERM "${pids[@]}" 2>/dev/null || true
	for _ in $(seq 1 300); do
		local left=()
		for p in "${pids[@]}"; do [ -d "/proc/$p" ] && left+=("$p"); done
		if [ ${#left[@]} -eq 0 ]; then
			rm -f "$dir/pids"
			return 0
		fi
		sleep 0.1
	done
	echo "local-cluster.sh: still running after 30 s, killing: ${left[*]}" >&2
	kill -KILL "${left[@]}" 2>/dev/null || true
	rm -f "$dir/pids"
}

case $cmd in
start)
	command -v slurmctld >/dev/null || { echo "local-cluster.sh: slurmctld not found: apt-get install slurm-wlm munge" >&2; exit 2; }
	if [ -f "$dir/pids" ]; then
		echo "local-cluster.sh: $dir/pids exists: a cluster was started there; stop it first" >&2
		exit 2
	fi
	mkdir -p "$dir/state" "$dir/spool" /run/munge
	chown munge:munge /run/munge
	if [ ! -f /etc/munge/munge.key ]; then
		dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
		chmod 400 /etc/munge/munge.key
		chown munge:munge /etc/munge/munge.key
	fi
	# On any failure below, stop what was started.
	trap 'stop_all' ERR
	if ! pgrep -x munged >/dev/null; then
		nohup /usr/sbin/munged -F --force >"$dir/munged.log" 2>&1 </dev/null &
		started munged $!
		for _ in $(seq 1 50); do [ -S /run/munge/munge.socket.2 ] && break; sleep 0.1; done
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
	nohup /usr/sbin/slurmctld -D -f "$SLURM_CONF" >>"$dir/ctld.out" 2>&1 </dev/null &
	started slurmctld $!
	nohup /usr/sbin/slurmd -D -f "$SLURM_CONF" >>"$dir/d.out" 2>&1 </dev/null &
	started slurmd $!
	for _ in $(seq 1 60); do
		if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
			echo "export SLURM_CONF=$SLURM_CONF"
			exit 0
		fi
		sleep 0.5
	done
	echo "local-cluster.sh: the node did not come up idle in 30 s (see $dir/ctld.log, $dir/d.log)" >&2
	stop_all
	exit 1
	;;
stop)
	stop_all
	;;
*)
	echo "usage: local-cluster.sh start|stop DIR" >&2
	exit 2
	;;
esac
