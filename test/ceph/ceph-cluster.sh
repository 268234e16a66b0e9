#!/usr/bin/env bash
# A throwaway one-node Ceph cluster for tests, from Debian 12's packages (Ceph 16.2:
# ceph-mon, ceph-osd, ceph-common). One monitor on 127.0.0.1 or CEPH_ADDR (msgr v2 only, on a free port
# picked at random below the ephemeral port range), one OSD whose objects live in RAM (memstore), cephx on,
# no mgr, and a replicated pool "rbd" of size 1. Every file it makes lives under DIR: the
# configuration, the keyrings, the stores, the PID files, the admin sockets and the logs
# (DIR/log/). It needs no root, no systemd, no containers and no block devices.
#
#   ceph-cluster.sh start DIR    DIR must not exist or be empty. Starts the cluster, waits until
#                                the pool takes I/O and `ceph health` says HEALTH_OK, writes
#                                the client's environment to DIR/env and prints it on stdout
#                                (progress and timings go to stderr), so that
#                                eval "$(ceph-cluster.sh start DIR)" sets it. On failure it
#                                names the step, prints the tail of the daemon's log, stops
#                                what it started and exits non-zero.
#   ceph-cluster.sh stop DIR     Stops the daemons recorded in DIR/*.pid (the OSD first):
#                                SIGTERM, then SIGKILL after 15 s. Safe to repeat.
#   ceph-cluster.sh status DIR   Prints `ceph -s` and the pools.
#   ceph-cluster.sh kill-osd DIR   Kills the OSD (SIGKILL), as a crash or a power cut would.
#   ceph-cluster.sh start-osd DIR  Starts the OSD again and waits until the monitor has it up.
#                                With CEPH_OSD_STORE=bluestore at start, the OSD keeps its data
#                                over a kill and a start; memstore's are gone.
#
# A client needs only CEPH_CONF: the configuration names the client.admin keyring in its
# [client] section, and librados reads $CEPH_CONF when asked for its default configuration
# (rados_conf_read_file(cluster, NULL)). The memstore OSD keeps its data in RAM only; the
# data are gone once it stops.
set -euo pipefail

# Variables of the caller's environment that Ceph reads would override the configuration
# written here (CEPH_KEYRING replaces every daemon's keyring), e.g. after eval'ing the output
# of another cluster's start.
unset CEPH_CONF CEPH_KEYRING CEPH_ARGS

me=$(basename "$0")
grace=15          # seconds between SIGTERM and SIGKILL on stop
osd_bytes=$((2 * 1024 * 1024 * 1024))   # the OSD's capacity: memstore's in RAM, bluestore's file (sparse)
# The OSD's object store: memstore (RAM; the data go when it stops) or bluestore (a sparse
# file DIR/osd.0/block, so that the OSD can be killed and restarted with its data).
store=${CEPH_OSD_STORE:-memstore}
# The address the monitor and the OSD bind and clients reach them at: loopback, or an address
# inside a network namespace a test made (the script then runs in that namespace, by ip netns exec)
addr=${CEPH_ADDR:-127.0.0.1}
[[ $addr =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || { echo "$(basename "$0"): CEPH_ADDR must be an IPv4 address, not '$addr'" >&2; exit 2; }
pg_num=8

usage() {
  echo "usage: $me start|stop|status DIR" >&2
  exit 2
}

say() { echo "$me: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

# The last lines of a daemon's log and of its stdout/stderr, for failure messages.
show_log() {
  local name=$1 f
  for f in "$dir/log/$name.log" "$dir/log/$name.out"; do
    if [ -s "$f" ]; then
      echo "--- last 25 lines of $f" >&2
      tail -n 25 "$f" >&2
    fi
  done
}

# Seconds since the start, with one decimal.
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The ceph CLI against this cluster, bounded in time so that a dead monitor cannot hang it.
cephc() { timeout 30 ceph --conf "$dir/ceph.conf" --connect-timeout 10 "$@"; }

# True if PID exists and has not exited (a zombie, state Z, has exited but may not be reaped
# yet; its command line reads empty).
running() {
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# True if PID is running and is a Ceph daemon of this cluster (its command line names our
# configuration), so that a recycled PID is never signalled.
ours() {
  running "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "--conf $dir/ceph.conf"
}

# Starts a daemon in the foreground (-f) in a session of its own, in the background of this
# script, with stdin from /dev/null and stdout/stderr to DIR/log/NAME.out (so that a caller
# reading our stdout does not wait for the daemon), and records its PID in DIR/NAME.pid.
# setsid does not fork here (a job of a non-interactive shell is no process group leader),
# so $! is the daemon's PID.
launch() {
  local name=$1
  shift
  setsid "$@" -f </dev/null >>"$dir/log/$name.out" 2>&1 &
  echo $! >"$dir/$name.pid"
}

# Fails the step STEP if the daemon NAME has died.
check_alive() {
  local name=$1 step=$2 pid
  pid=$(cat "$dir/$name.pid")
  if ! running "$pid"; then
    show_log "$name"
    die "$step: $name (PID $pid) exited"
  fi
}

# Stops the daemons recorded in DIR/*.pid, the OSD before the monitor: on SIGTERM an OSD
# tells the monitor that it is going down and waits up to 5 s (osd_mon_shutdown_timeout) for
# the answer.
stop_daemons() {
  local name f pid waited any=0
  for name in osd.0 mon.a; do
    f=$dir/$name.pid
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if [ -n "$pid" ] && ours "$pid"; then
      any=1
      kill -TERM "$pid" 2>/dev/null || true
      waited=0
      while running "$pid" && [ $waited -lt $((grace * 10)) ]; do
        sleep 0.1
        waited=$((waited + 1))
      done
      if ours "$pid"; then
        say "$name (PID $pid) still running ${grace} s after SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while running "$pid"; do sleep 0.1; done
      else
        say "$name (PID $pid) stopped after $(awk -v t=$waited 'BEGIN { printf "%.1f", t / 10 }') s"
      fi
    fi
    rm -f "$f"
  done
  [ $any = 1 ] || say "no daemon of $dir running"
}

# A free TCP port on the cluster's address, below the kernel's ephemeral range (where no outgoing connection
# can take it between this check and the monitor's bind: the 10,000 ports below that range's
# start, 22768-32767 with Linux's default), from a random start: the first port that nothing
# listens on (ss) and that refuses a connection (bash's /dev/tcp).
pick_port() {
  local first i port
  first=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  first=$((first > 11024 ? first - 10000 : 1024))
  local start=$((RANDOM % 10000))
  for ((i = 0; i < 10000; i++)); do
    port=$((first + (start + i) % 10000))
    if command -v ss >/dev/null && [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then
      continue
    fi
    if (exec 3<>"/dev/tcp/$addr/$port") 2>/dev/null; then
      continue
    fi
    echo "$port"
    return 0
  done
  return 1
}

# Starts osd.0 (made before) and waits until the monitor has it up at this process's address
# (whose nonce is its PID: after a kill, the map says "up" at the old one until it learns better).
start_osd() {
  local deadline pid
  launch osd.0 ceph-osd --conf "$dir/ceph.conf" -i 0
  pid=$(cat "$dir/osd.0.pid")
  deadline=$((SECONDS + 60))
  until cephc osd dump 2>/dev/null | grep -q "^osd\.0 up .*/$pid "; do
    check_alive osd.0 "start OSD"
    [ $SECONDS -lt $deadline ] || { show_log osd.0; die "start OSD: osd.0 not up in 60 s"; }
    sleep 0.2
  done
}

# The [osd] section's lines for the object store.
store_conf() {
  case $store in
    memstore)
      printf 'osd objectstore = memstore\nmemstore device bytes = %s\n' "$osd_bytes" ;;
    bluestore)
      # One sparse file for data, RocksDB and its log; a small cache, as RAM is shared with tests.
      printf 'osd objectstore = bluestore\nbluestore block create = true\nbluestore block size = %s\n' "$osd_bytes"
      printf 'bluestore cache autotune = false\nbluestore cache size = 134217728\nosd memory target = 939524096\n' ;;
    *) die "CEPH_OSD_STORE: $store is neither memstore nor bluestore" ;;
  esac
}

start() {
  case $store in memstore | bluestore) ;; *) die "CEPH_OSD_STORE: $store is neither memstore nor bluestore" ;; esac
  local t0 t_mon t_osd t_pool port fsid uuid deadline out h=""
  t0=$(now)
  local tool
  for tool in ceph ceph-mon ceph-osd ceph-authtool monmaptool rados rbd setsid timeout; do
    command -v "$tool" >/dev/null || die "check tools: $tool not found (apt-get install ceph-mon ceph-osd ceph-common)"
  done
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    die "check directory: $dir is not empty (stop the cluster there and remove it first)"
  fi
  mkdir -p "$dir/log" "$dir/run" "$dir/crash"
  dir=$(cd "$dir" && pwd)

  # From here on a failure stops whatever was started; DIR and its logs stay for inspection.
  trap 'rc=$?; if [ $rc != 0 ]; then stop_daemons; say "logs are in $dir/log"; fi' EXIT

  port=$(pick_port) || die "pick port: no free port below the ephemeral range"
  fsid=$(cat /proc/sys/kernel/random/uuid)
  uuid=$(cat /proc/sys/kernel/random/uuid)

  # The configuration. Paths are per daemon through the metavariable $name (mon.a, osd.0);
  # \$ keeps it for Ceph to expand. Everything the daemons write goes under DIR.
  cat >"$dir/ceph.conf" <<EOF
# A throwaway test cluster made by test/ceph/ceph-cluster.sh.
[global]
fsid = $fsid
mon host = [v2:$addr:$port]
public addr = $addr
cluster addr = $addr
# msgr v2 only: no listener on the legacy protocol.
ms bind msgr1 = false
ms bind msgr2 = true
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
# Refusing insecure global_id reclaim also clears the health warning about allowing it.
auth allow insecure global id reclaim = false
run dir = $dir/run
crash dir = $dir/crash
# One OSD: pools of one replica, placed on OSDs rather than hosts, made at a fixed size.
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
# Keep HEALTH_OK on a cluster of one replica and no mgr: no warning about the missing
# redundancy, and no "no active mgr" (raised once OSDs exist and the monitor map is
# older than this grace, 2 minutes by default).
mon warn on pool no redundancy = false
# The host's disk is the test machine's, not the cluster's: no MON_DISK_LOW warning (by default
# below 30% free) keeps HEALTH_OK from a cluster that writes a few megabytes.
mon data avail warn = 1
mon mgr mkfs grace = 315360000
# The monitor commits map changes every 0.1 s instead of every 1 s: the OSD's boot and the
# pool's creation take several map epochs each, and start takes about 3 s instead of 9.
paxos propose interval = 0.1

[mon]
mon data = $dir/\$name
keyring = $dir/\$name/keyring
log file = $dir/log/\$name.log
mon cluster log file = $dir/log/\$channel.log

[osd]
osd data = $dir/\$name
keyring = $dir/\$name.keyring
log file = $dir/log/\$name.log
$(store_conf)

[client]
keyring = $dir/keyring
EOF

  # Keys: the monitors' own (mon.), client.admin with every capability, and osd.0's. The
  # monitor's initial keyring holds all three, so that the monitor knows client.admin and
  # osd.0 from its first start.
  ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$dir/keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool --create-keyring "$dir/osd.0.keyring" --gen-key -n osd.0 \
    --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *' >/dev/null
  ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/keyring" >/dev/null
  ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/osd.0.keyring" >/dev/null

  # The monitor: a map with the single monitor "a" on its v2 address, the store made from it.
  monmaptool --create --fsid "$fsid" --addv a "[v2:$addr:$port]" --enable-all-features \
    "$dir/monmap" >"$dir/log/monmaptool.out" 2>&1 \
    || { cat "$dir/log/monmaptool.out" >&2; die "monmaptool --create"; }
  ceph-mon --conf "$dir/ceph.conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/mon.keyring" \
    >"$dir/log/mon.a.mkfs.out" 2>&1 || { tail -n 25 "$dir/log/mon.a.mkfs.out" >&2; die "ceph-mon --mkfs"; }
  launch mon.a ceph-mon --conf "$dir/ceph.conf" -i a

  # Up once it answers a command (a monitor of one forms its quorum alone).
  deadline=$((SECONDS + 30))
  until cephc mon stat >/dev/null 2>&1; do
    check_alive mon.a "start monitor"
    [ $SECONDS -lt $deadline ] || { show_log mon.a; die "start monitor: no answer on $addr:$port in 30 s"; }
    sleep 0.2
  done
  t_mon=$(since "$t0")
  say "monitor mon.a up on [v2:$addr:$port] after $t_mon s"

  # The OSD: registered under id 0 with its uuid (its key is already known), its store made
  # offline in its data directory (--no-mon-config: take no configuration from the
  # monitor), then started.
  cephc osd new "$uuid" 0 >/dev/null || die "ceph osd new $uuid 0"
  mkdir -p "$dir/osd.0"
  ceph-osd --conf "$dir/ceph.conf" -i 0 --mkfs --osd-uuid "$uuid" --no-mon-config \
    >"$dir/log/osd.0.mkfs.out" 2>&1 || { tail -n 25 "$dir/log/osd.0.mkfs.out" >&2; die "ceph-osd --mkfs"; }
  start_osd
  t_osd=$(since "$t0")
  say "OSD osd.0 up after $t_osd s"

  # The pool, tagged for RBD by `rbd pool init` (which waits until the pool takes writes).
  # Without a mgr no PG states reach the monitor, so the pool counts as ready once an object
  # can be written, read and removed in it (that needs its PG active).
  out=$(cephc osd pool create rbd "$pg_num" "$pg_num" replicated 2>&1) \
    || die "ceph osd pool create rbd: $out"
  timeout 60 rbd --conf "$dir/ceph.conf" pool init rbd || { show_log osd.0; die "rbd pool init rbd (60 s)"; }
  echo "ready" >"$dir/run/probe"
  { timeout 60 rados --conf "$dir/ceph.conf" -p rbd put ready-probe "$dir/run/probe" \
      && timeout 60 rados --conf "$dir/ceph.conf" -p rbd stat ready-probe >/dev/null \
      && timeout 60 rados --conf "$dir/ceph.conf" -p rbd rm ready-probe; } \
    || { show_log osd.0; die "pool rbd: writing a probe object failed or took over 60 s"; }
  rm -f "$dir/run/probe"
  deadline=$((SECONDS + 60))
  until h=$(cephc health 2>/dev/null) && [ "$h" = HEALTH_OK ]; do
    [ $SECONDS -lt $deadline ] || { cephc health detail >&2 || true; die "health: not HEALTH_OK after 60 s: $h"; }
    sleep 0.5
  done
  t_pool=$(since "$t0")
  say "pool rbd ready, HEALTH_OK after $t_pool s (monitor $t_mon s, OSD $t_osd s)"

  # The client's environment: on stdout and in DIR/env.
  {
    printf 'export CEPH_CONF=%q\n' "$dir/ceph.conf"
    printf 'export CEPH_KEYRING=%q\n' "$dir/keyring"
    printf 'export CEPH_MON=%q\n' "$addr:$port"
    printf 'export CEPH_POOL=%q\n' rbd
  } >"$dir/env"
  cat "$dir/env"
  trap - EXIT
}

[ $# = 2 ] || usage
dir=$2
[ -n "$dir" ] || usage
case $1 in
  start) start ;;
  stop)
    [ -d "$dir" ] || die "stop: no directory $dir"
    dir=$(cd "$dir" && pwd)
    stop_daemons
    ;;
  kill-osd)
    [ -f "$dir/ceph.conf" ] || die "kill-osd: no $dir/ceph.conf"
    dir=$(cd "$dir" && pwd)
    pid=$(cat "$dir/osd.0.pid" 2>/dev/null) || die "kill-osd: no $dir/osd.0.pid"
    ours "$pid" || die "kill-osd: osd.0 (PID $pid) of $dir is not running"
    kill -KILL "$pid"
    while running "$pid"; do sleep 0.1; done
    rm -f "$dir/osd.0.pid"
    say "osd.0 (PID $pid) killed"
    ;;
  start-osd)
    [ -f "$dir/ceph.conf" ] || die "start-osd: no $dir/ceph.conf"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/osd.0.pid" ] && ours "$(cat "$dir/osd.0.pid")"; then
      die "start-osd: osd.0 of $dir is running"
    fi
    t0=$(now)
    start_osd
    say "osd.0 up after $(since "$t0") s"
    ;;
  status)
    [ -f "$dir/ceph.conf" ] || die "status: no $dir/ceph.conf"
    dir=$(cd "$dir" && pwd)
    { [ -f "$dir/mon.a.pid" ] && ours "$(cat "$dir/mon.a.pid")"; } || die "status: mon.a of $dir is not running"
    cephc -s
    # Without a mgr, `ceph -s` shows no pools or PGs; the OSD map has the pools.
    cephc osd pool ls detail
    ;;
  *) usage ;;
esac
