#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine, for the Slurm executor's tests (and by hand).
#
#   scripts/slurm-test-cluster.sh start    # install slurm-wlm + munge if missing, configure, start, wait
#   scripts/slurm-test-cluster.sh status   # is it up? prints sinfo and the daemons' pids
#   scripts/slurm-test-cluster.sh stop     # cancel its jobs, stop exactly the daemons `start` started
#   scripts/slurm-test-cluster.sh env      # prints `export SLURM_CONF=...` (eval "$(... env)")
#
# Everything lives under one state directory, $TUNE_SLURM_DIR (default /tmp/tune-slurm): slurm.conf,
# the munge key and socket, the controller's state, the daemons' logs and the pids this script
# started. Client commands find the cluster through SLURM_CONF=$TUNE_SLURM_DIR/slurm.conf; the
# munge socket is given to Slurm in slurm.conf (AuthInfo), so a system munge or Slurm is never used
# or touched. Ports: $TUNE_SLURM_PORT (controller, default 16817) and the next one (slurmd), on
# localhost. Runs as root (Slurm 22.05 from Debian 12), with ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none and no cgroup.conf (slurmd refuses CgroupPlugin=disabled), no accounting.
set -euo pipefail

state_dir=${TUNE_SLURM_DIR:-/tmp/tune-slurm}
port=${TUNE_SLURM_PORT:-16817}
start_timeout=${TUNE_SLURM_START_TIMEOUT:-60}
conf=$state_dir/slurm.conf
pids=$state_dir/pids  # one line per daemon: NAME PID

say() { echo "slurm-test-cluster: $*" >&2; }
die() { say "error: $*"; exit 1; }

install_packages() {
  local missing=()
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) -eq 0 ]] || die "packages ${missing[*]} are missing; run as root (or: apt-get install ${missing[*]})"
  say "installing ${missing[*]} from Debian"
  # policy-rc.d keeps the packages' own services (system munge, slurmctld, slurmd) from starting.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  local ok=1
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || ok=0
  if ((created_policy)); then rm -f "$policy"; fi
  ((ok)) || die "apt-get install ${missing[*]} failed"
}

# The pid recorded for daemon NAME, if that process is alive and is still the daemon we started
# (its command line names our state directory: guards against a reused pid).
live_pid() {
  local name=$1 pid
  [[ -f $pids ]] || return 1
  pid=$(awk -v n="$name" '$1 == n { print $2 }' "$pids")
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$state_dir" || return 1
  echo "$pid"
}

node_state() { SLURM_CONF=$conf timeout 10 sinfo -h -n localhost -o %T 2>/dev/null | head -1; }

write_config() {
  local cpus sockets cores threads memory line
  line=$(slurmd -C 2>/dev/null | head -1 || true)
  field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$line"; }
  cpus=$(field CPUs); sockets=$(field SocketsPerBoard); cores=$(field CoresPerSocket)
  threads=$(field ThreadsPerCore); memory=$(field RealMemory)
  [[ -n $cpus ]] || { cpus=$(nproc); sockets=1; cores=$cpus; threads=1; }
  [[ -n $memory ]] || memory=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024))
  cat >"$conf" <<EOF
# Written by scripts/slurm-test-cluster.sh: a private single-node cluster for tests.
ClusterName=tunetest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state_dir/munge/munge.socket
StateSaveLocation=$state_dir/ctld
SlurmdSpoolDir=$state_dir/slurmd
SlurmctldPidFile=$state_dir/slurmctld.pid
SlurmdPidFile=$state_dir/slurmd.pid
SlurmctldLogFile=$state_dir/slurmctld.log
SlurmdLogFile=$state_dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
ReturnToService=2
# Quick tests: scheduled at once, killed soon after their time limit, short KillWait.
SchedulerParameters=sched_min_interval=0
KillWait=5
OverTimeLimit=0
InactiveLimit=0
MinJobAge=300
MessageTimeout=10
# Preemption, for the executor's tests of it: a job in partition 'high' cancels jobs of partition
# 'low' (state PREEMPTED) when it needs their CPUs; jobs in 'debug' (the default) are never preempted.
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=OFF
PartitionName=low Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=CANCEL
PartitionName=high Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
EOF
}

# Starts a daemon in the foreground mode of its own (-D / -F) in a new session, records its pid.
launch() {
  local name=$1; shift
  setsid "$@" </dev/null >"$state_dir/$name.out" 2>&1 &
  echo "$name $!" >>"$pids"
}

start() {
  if [[ -n $(live_pid slurmctld || true) ]] && [[ $(node_state) == idle* || $(node_state) == mixed* || $(node_state) == alloc* ]]; then
    say "already running ($conf)"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  [[ -f $pids ]] && stop_daemons
  install_packages
  for cmd in munged slurmctld slurmd sinfo; do
    command -v "$cmd" >/dev/null || [[ -x /usr/sbin/$cmd ]] || die "'$cmd' not found after installing slurm-wlm and munge"
  done
  [[ $(id -u) -eq 0 ]] || die "the test cluster runs its daemons as root; run as root"
  PATH=$PATH:/usr/sbin

  rm -rf "$state_dir"
  mkdir -p "$state_dir"/{munge,ctld,slurmd}
  chmod 755 "$state_dir" "$state_dir/munge"
  : >"$pids"
  write_config

  # munge: a fresh key, its socket, pid, log and seed inside the state directory.
  dd if=/dev/urandom of="$state_dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$state_dir/munge/munge.key"
  launch munged munged --foreground --force --key-file="$state_dir/munge/munge.key" \
    --socket="$state_dir/munge/munge.socket" --pid-file="$state_dir/munge/munged.pid" \
    --log-file="$state_dir/munge/munged.log" --seed-file="$state_dir/munge/munged.seed"
  for _ in $(seq 50); do [[ -S $state_dir/munge/munge.socket ]] && break; sleep 0.1; done
  [[ -S $state_dir/munge/munge.socket ]] ||
    { stop_daemons; die "munged did not start; see $state_dir/munged.out and $state_dir/munge/munged.log"; }

  launch slurmctld slurmctld -D -f "$conf"
  launch slurmd slurmd -D -f "$conf" -N localhost

  local deadline=$((SECONDS + start_timeout)) state=""
  while ((SECONDS < deadline)); do
    state=$(node_state || true)
    [[ $state == idle* ]] && break
    for d in slurmctld slurmd; do
      [[ -n $(live_pid "$d" || true) ]] ||
        { stop_daemons; die "$d exited during start-up; see $state_dir/$d.out and $state_dir/$d.log"; }
    done
    if [[ $state == down* || $state == drain* ]]; then
      SLURM_CONF=$conf scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
    fi
    sleep 0.5
  done
  if [[ $state != idle* ]]; then
    stop_daemons
    die "the node did not become idle within ${start_timeout}s (last state: '${state:-no answer}'); see $state_dir/slurmctld.log and $state_dir/slurmd.log"
  fi
  say "up: node localhost idle, config $conf"
  echo "export SLURM_CONF=$conf"
}

# Kills exactly the daemons this script started (SIGTERM, then SIGKILL after 10 s).
stop_daemons() {
  local name pid waiting
  for name in slurmd slurmctld munged; do
    pid=$(live_pid "$name" || true)
    if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for _ in $(seq 100); do
    waiting=0
    for name in slurmd slurmctld munged; do [[ -n $(live_pid "$name" || true) ]] && waiting=1; done
    ((waiting)) || break
    sleep 0.1
  done
  for name in slurmd slurmctld munged; do
    pid=$(live_pid "$name" || true)
    [[ -n $pid ]] && { say "$name (pid $pid) ignored SIGTERM; killing it"; kill -KILL "$pid" 2>/dev/null || true; }
  done
  rm -f "$pids"
}

stop() {
  if [[ ! -f $pids ]]; then
    say "not running (no $pids)"
    return 0
  fi
  # Jobs still on this private cluster would leave their slurmstepd behind: cancel them first.
  if [[ -n $(live_pid slurmctld || true) ]]; then
    if [[ -n $(SLURM_CONF=$conf timeout 10 squeue -h -o %i 2>/dev/null || true) ]]; then
      SLURM_CONF=$conf timeout 10 scancel --full --signal=KILL -u root 2>/dev/null || true
      SLURM_CONF=$conf timeout 10 scancel -u root 2>/dev/null || true
      for _ in $(seq 50); do
        [[ -z $(SLURM_CONF=$conf timeout 10 squeue -h -t PD,R,CG,S -o %i 2>/dev/null || true) ]] && break
        sleep 0.2
      done
    fi
  fi
  stop_daemons
  say "stopped"
}

status() {
  local up=1 name pid
  for name in munged slurmctld slurmd; do
    pid=$(live_pid "$name" || true)
    if [[ -n $pid ]]; then echo "$name: pid $pid"; else echo "$name: not running"; up=0; fi
  done
  ((up)) || return 1
  SLURM_CONF=$conf sinfo
  echo "export SLURM_CONF=$conf"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 {start|stop|status|env}" >&2; exit 2 ;;
esac
