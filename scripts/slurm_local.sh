#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, with accounting through slurmdbd, for the cluster
# tests (tests/cluster, `make test-cluster`) and for trying profiles/slurm without a cluster.
#
#   scripts/slurm_local.sh start    install what is missing (as root), write the configuration,
#                                   start munged, mariadbd, slurmdbd, slurmctld and slurmd,
#                                   register the cluster, wait until the node is idle
#   scripts/slurm_local.sh stop     stop the daemons this script started (by their PIDs)
#   scripts/slurm_local.sh status   what runs, sinfo, the last lines of each log
#
# Idempotent: `start` twice leaves one set of daemons; a daemon already running (started here
# before, or by someone else, e.g. munged) is reused and never stopped by `stop` unless this
# script started it. State (PIDs, logs, spool, the database) lives in $LECODE_SLURM_STATE
# (default /var/tmp/lecode-slurm). The configuration is written to /etc/slurm/slurm.conf and
# slurmdbd.conf, so that sbatch, sacct, squeue and sinfo find it without SLURM_CONF; a
# slurm.conf that this script did not write is never overwritten (the script stops instead).
#
# Environment (optional):
#   LECODE_SLURM_STATE    state directory (default /var/tmp/lecode-slurm)
#   LECODE_SLURM_CLUSTER  cluster name (default lecode)
#   LECODE_SLURM_ACCOUNT  an account created for root, for slurm_account (default lecode)
#   LECODE_SLURM_CPUS     CPUs the node offers (default: nproc; more than the machine has is
#                         allowed, the node then oversubscribes)
#   LECODE_SLURM_MEM_MB   memory the node offers (default: 90% of MemTotal)
#   LECODE_SLURM_GPUS     GPU slots the node advertises (default 1): count only, no device
#                         behind them, so that jobs asking for a GPU (--gres=gpu:1, --gpus=1)
#                         are scheduled and their scripts can be tested on a CPU machine;
#                         0 for none
#   LECODE_SLURM_DB_PORT  port of the private MariaDB on 127.0.0.1 (default 3307)
#   LECODE_SLURM_TIMEOUT  seconds to wait for each daemon (default 60)
#
# Tested on Debian 12 (SLURM 22.05, MariaDB 10.11) as root. Not for production: every daemon
# runs as root, munge uses the package's key, and the database has a fixed local password.
set -euo pipefail

STATE="${LECODE_SLURM_STATE:-/var/tmp/lecode-slurm}"
CLUSTER="${LECODE_SLURM_CLUSTER:-lecode}"
ACCOUNT="${LECODE_SLURM_ACCOUNT:-lecode}"
DB_PORT="${LECODE_SLURM_DB_PORT:-3307}"
WAIT="${LECODE_SLURM_TIMEOUT:-60}"
CONF_DIR=/etc/slurm
MARKER="# written by lecode scripts/slurm_local.sh"
DB_PASS="lecode-local-slurmdbd"
PACKAGES=(slurmctld slurmd slurmdbd slurm-client munge mariadb-server)

log() { printf '[slurm_local %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf '[slurm_local] ERROR: %s\n' "$*" >&2
  exit 1
}

# -- PIDs of what this script started -----------------------------------------------------

pid_of() { # NAME -> the recorded PID if that process still runs the expected program
  local name=$1 file="$STATE/pids/$1.pid" pid comm
  [ -s "$file" ] || return 1
  pid=$(cat "$file")
  [ -d "/proc/$pid" ] || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  case "$name" in
    mariadbd) [[ $comm == mariadbd || $comm == mysqld ]] || return 1 ;;
    *) [[ $comm == "$name"* ]] || return 1 ;;
  esac
  echo "$pid"
}

record() { # NAME PID
  mkdir -p "$STATE/pids"
  echo "$2" >"$STATE/pids/$1.pid"
}

wait_for() { # [--pid NAME] DESCRIPTION COMMAND... : retries COMMAND until it succeeds, for at
  # most $WAIT seconds, or until the daemon NAME started here has exited
  local daemon=""
  if [ "$1" = --pid ]; then
    daemon=$2
    shift 2
  fi
  local what=$1 deadline=$((SECONDS + WAIT))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    if [ -n "$daemon" ] && ! pid_of "$daemon" >/dev/null; then
      log "$daemon exited"
      return 1
    fi
    sleep 0.5
  done
  log "$what"
}

tail_log() {
  [ -f "$1" ] && { echo "--- last lines of $1:" >&2; tail -n 20 "$1" >&2; } || true
}

launch() { # NAME LOG COMMAND... : start a daemon in the foreground mode, in its own session
  local name=$1 logfile=$2
  shift 2
  setsid "$@" </dev/null >>"$logfile" 2>&1 &
  record "$name" $!
  log "started $name (pid $!)"
}

# -- install ------------------------------------------------------------------------------

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get"
  log "installing ${missing[*]} (apt-get)"
  # The packages' own service scripts are not used (nothing starts them here).
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >"$STATE/apt.log" 2>&1 || {
    log "apt-get install failed; trying apt-get update first"
    apt-get update -q >>"$STATE/apt.log" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
      >>"$STATE/apt.log" 2>&1 || {
      tail -n 20 "$STATE/apt.log" >&2
      die "apt-get install ${missing[*]} failed (log $STATE/apt.log)"
    }
  }
}

# -- configuration ------------------------------------------------------------------------

write_config() {
  local host cpus mem gpus gres=""
  host=$(hostname -s)
  gpus="${LECODE_SLURM_GPUS:-1}"
  [ "$gpus" -gt 0 ] 2>/dev/null && gres="Gres=gpu:$gpus"
  cpus="${LECODE_SLURM_CPUS:-$(nproc)}"
  mem="${LECODE_SLURM_MEM_MB:-$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)}"
  mkdir -p "$CONF_DIR" "$STATE"/{ctld,slurmd,logs}
  if [ -f "$CONF_DIR/slurm.conf" ] && ! head -n 1 "$CONF_DIR/slurm.conf" | grep -qF "$MARKER"; then
    die "$CONF_DIR/slurm.conf exists and was not written by this script; this machine seems to \
belong to a real SLURM cluster: use it directly (docs/clusters.md), or move that \
file away to use a local one-node cluster"
  fi
  cat >"$STATE/slurm.conf.new" <<EOF
$MARKER; rewritten on every start
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/logs/slurmctld.log
SlurmdLogFile=$STATE/logs/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
GresTypes=gpu
MinJobAge=300
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem $gres State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  {
    echo "$MARKER; rewritten on every start"
    [ -z "$gres" ] || echo "NodeName=$host Name=gpu Count=$gpus File=/dev/null"
  } >"$STATE/gres.conf.new"
  CONFIG_CHANGED=0
  local f
  for f in slurm.conf gres.conf; do
    cmp -s "$STATE/$f.new" "$CONF_DIR/$f" || CONFIG_CHANGED=1
    mv "$STATE/$f.new" "$CONF_DIR/$f"
  done
  umask 077
  cat >"$CONF_DIR/slurmdbd.conf" <<EOF
$MARKER; rewritten on every start
AuthType=auth/munge
DbdHost=$(hostname -s)
DbdAddr=127.0.0.1
SlurmUser=root
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/logs/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
  umask 022
  chmod 600 "$CONF_DIR/slurmdbd.conf"
}

# -- the daemons ----------------------------------------------------------------------------

start_munge() {
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running"
    return
  fi
  [ -s /etc/munge/munge.key ] || {
    log "creating the munge key"
    mungekey --create --force >/dev/null 2>&1 || /usr/sbin/mungekey -c -f
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  }
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  launch munged "$STATE/logs/munged.out" runuser -u munge -- /usr/sbin/munged --foreground
  wait_for "munged answers" bash -c 'munge -n </dev/null | unmunge' || {
    tail_log "$STATE/logs/munged.out"
    die "munged did not start"
  }
  # the recorded PID is runuser's; munged is its child
  local child
  child=$(pgrep -P "$(cat "$STATE/pids/munged.pid")" -x munged || true)
  [ -n "$child" ] && record munged "$child"
}

db() { mariadb --protocol=socket -S "$STATE/mysqld.sock" -u root "$@"; }

start_mariadb() {
  if pid_of mariadbd >/dev/null; then
    log "mariadbd already running (pid $(pid_of mariadbd))"
  else
    if [ ! -d "$STATE/mysql/mysql" ]; then
      log "initialising the accounting database in $STATE/mysql"
      mkdir -p "$STATE/mysql"
      mariadb-install-db --user=root --datadir="$STATE/mysql" --auth-root-authentication-method=socket \
        >"$STATE/logs/mariadb-install.log" 2>&1 || {
        tail_log "$STATE/logs/mariadb-install.log"
        die "mariadb-install-db failed"
      }
    fi
    launch mariadbd "$STATE/logs/mariadbd.log" /usr/sbin/mariadbd --no-defaults --user=root \
      --datadir="$STATE/mysql" --socket="$STATE/mysqld.sock" --pid-file="$STATE/mysqld.pid" \
      --port="$DB_PORT" --bind-address=127.0.0.1 --skip-name-resolve \
      --innodb-buffer-pool-size=256M --innodb-log-file-size=64M \
      --innodb-lock-wait-timeout=900
    wait_for --pid mariadbd "mariadbd answers on port $DB_PORT" db -e "SELECT 1" || {
      tail_log "$STATE/logs/mariadbd.log"
      die "mariadbd did not start (port $DB_PORT taken? set LECODE_SLURM_DB_PORT)"
    }
  fi
  db -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
         CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
         GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
         GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
         FLUSH PRIVILEGES;"
}

start_slurmdbd() {
  if pid_of slurmdbd >/dev/null; then
    log "slurmdbd already running (pid $(pid_of slurmdbd))"
  else
    launch slurmdbd "$STATE/logs/slurmdbd.out" /usr/sbin/slurmdbd -D
  fi
  wait_for --pid slurmdbd "slurmdbd answers" sacctmgr -n list cluster || {
    tail_log "$STATE/logs/slurmdbd.log"
    tail_log "$STATE/logs/slurmdbd.out"
    die "slurmdbd did not start"
  }
  if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
    log "registered cluster $CLUSTER"
  fi
  if ! sacctmgr -n -P list account format=account | grep -qx "$ACCOUNT"; then
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description=lecode organization=lecode \
      >/dev/null
  fi
  if ! sacctmgr -n -P list assoc user=root account="$ACCOUNT" format=account | grep -qx "$ACCOUNT"; then
    sacctmgr -i add user root account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
    log "account $ACCOUNT for root"
  fi
}

start_slurmctld() {
  if pid_of slurmctld >/dev/null; then
    log "slurmctld already running (pid $(pid_of slurmctld)); reconfiguring"
    scontrol reconfigure >/dev/null 2>&1 || true
  else
    launch slurmctld "$STATE/logs/slurmctld.out" /usr/sbin/slurmctld -D -i
  fi
  wait_for --pid slurmctld "slurmctld answers" scontrol ping || {
    tail_log "$STATE/logs/slurmctld.log"
    tail_log "$STATE/logs/slurmctld.out"
    die "slurmctld did not start"
  }
}

start_slurmd() {
  if pid_of slurmd >/dev/null; then
    log "slurmd already running (pid $(pid_of slurmd))"
  else
    launch slurmd "$STATE/logs/slurmd.out" /usr/sbin/slurmd -D
  fi
  local host
  host=$(hostname -s)
  local deadline=$((SECONDS + WAIT)) st=""
  while ((SECONDS < deadline)); do
    st=$(sinfo -h -n "$host" -o %t 2>/dev/null | head -n 1)
    case "$st" in
      idle | mix | alloc) break ;;
      drain* | drng | down* | fail*)
        scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
        ;;
      inval*) break ;;
    esac
    sleep 0.5
  done
  case "$st" in
    idle | mix | alloc) log "node $host is $st: the cluster is up" ;;
    *)
      tail_log "$STATE/logs/slurmd.log"
      tail_log "$STATE/logs/slurmctld.log"
      scontrol show node "$host" >&2 || true
      die "node $host is '${st:-unknown}', not idle, after ${WAIT}s"
      ;;
  esac
}

start() {
  mkdir -p "$STATE"/{pids,logs}
  install_packages
  write_config
  if [ "$CONFIG_CHANGED" = 1 ] && { pid_of slurmctld || pid_of slurmd; } >/dev/null; then
    log "the node's configuration changed: restarting slurmctld and slurmd"
    stop_daemons slurmd slurmctld
  fi
  start_munge
  start_mariadb
  start_slurmdbd
  start_slurmctld
  start_slurmd
  # the executor plugin reads job states through sacct
  wait_for "sacct answers" sacct -n -X --starttime now-1hours
}

stop_daemons() { # NAME... : stop these daemons if this script started them
  local name pid any=0
  for name in "$@"; do
    if pid=$(pid_of "$name"); then
      any=1
      kill -TERM "$pid" 2>/dev/null || true
      local deadline=$((SECONDS + 30))
      while [ -d "/proc/$pid" ] && ((SECONDS < deadline)); do sleep 0.2; done
      if [ -d "/proc/$pid" ]; then
        log "$name (pid $pid) did not stop in 30 s; SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
      fi
      log "stopped $name (pid $pid)"
    fi
    rm -f "$STATE/pids/$name.pid"
  done
  [ $any = 1 ] || log "nothing to stop (no daemon started by this script is running)"
}

stop() {
  stop_daemons slurmd slurmctld slurmdbd mariadbd munged
}

status() {
  local name pid
  for name in munged mariadbd slurmdbd slurmctld slurmd; do
    if pid=$(pid_of "$name"); then echo "$name: running (pid $pid)"; else echo "$name: not started here"; fi
  done
  sinfo 2>&1 || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
