#!/bin/bash
# Runs inside the QEMU guest (Linux 6.12): the kernel's NVMe/TCP host with native multipath
# against two of our target processes (gateways A and B) serving one subsystem on one shared
# file. The host script (run-multipath-interop.sh) kills, restarts and re-states the gateways;
# this side keeps fio writing and verifying through the multipath device the whole time and
# does what only the guest can: cut one path's traffic (tc drops it both ways) and report the
# paths' states.
#
# Environment: NQN; DISCOVERY (1, the default: check discovery through the referral first; 0: skip);
# PA, PB (the gateways' ports on the host, also their addresses inside the
# guest: 127.0.0.1:PA is carried to 10.0.2.100:4420, that is to the host's 127.0.0.1:PA, so the
# discovery log's addresses are right here too); KATO, RECONNECT (nvme connect's keep-alive
# timeout and reconnect delay).
#
# Commands from the host: files /job/cmd.N (N = 1, 2, ...), each one line, run in order and
# answered with "ACK N ok|FAIL" on the output:
#   partition A|B        drop all traffic of that path (a partition; nothing is closed)
#   heal A|B             let it through again
#   paths SECONDS SPEC.. wait until every path is as SPEC says ("A=live/optimized B=connecting"),
#                        print the time it took and `nvme list-subsys`
#   finish               stop fio after its current round and report
set -u
. /job/lib.sh
NQN=${NQN:?} PA=${PA:?} PB=${PB:?} KATO=${KATO:-5} RECONNECT=${RECONNECT:-1}
ADDR_A=10.0.2.100 ADDR_B=10.0.2.101
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
addr_of_path() { [ "$1" = A ] && echo $ADDR_A || echo $ADDR_B; }

phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = Y ] && check "native NVMe multipath is on" \
  || { fail "nvme_core.multipath is off"; exit 1; }
echo "kernel $(uname -r); $(nvme version 2>&1 | head -1); $(fio --version)"

# ---- discovery: one address finds both gateways through the referral (DISCOVERY=0: gateways
# without referrals, connected straight away) ----
if [ "${DISCOVERY:-1}" = 1 ]; then
socat TCP-LISTEN:"$PA",bind=127.0.0.1,reuseaddr,fork TCP:$ADDR_A:4420 &
socat TCP-LISTEN:"$PB",bind=127.0.0.1,reuseaddr,fork TCP:$ADDR_B:4420 &
sleep 0.5
log=$(nvme discover -t tcp -a 127.0.0.1 -s "$PA" 2>&1) || fail "nvme discover: $log"
echo "$log" | grep -E "^(=====|trtype|subtype|trsvcid|subnqn|traddr)"
echo "$log" | grep -q "subtype: *discovery subsystem referral" && check "gateway A's discovery log has a referral" \
  || fail "no referral in gateway A's discovery log"
# connect-all follows the referral to gateway B's discovery controller and connects there too
phase "nvme connect-all -a 127.0.0.1 -s $PA" nvme connect-all -t tcp -a 127.0.0.1 -s "$PA" || fail "connect-all"
sleep 1
paths_found=$(for c in /sys/class/nvme/nvme*; do
  [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && sed -n 's/.*trsvcid=\([0-9]*\).*/\1/p' "$c/address"
done | sort -n | tr '\n' ' ')
echo "connect-all connected $NQN through ports: $paths_found"
[ "$paths_found" = "$(printf '%s\n' "$PA" "$PB" | sort -n | tr '\n' ' ')" ] \
  && check "connect-all reached both gateways (the second through the referral)" \
  || fail "connect-all reached $paths_found, expected $PA and $PB"
nvme disconnect -n "$NQN" >/dev/null 2>&1
kill %1 %2 2>/dev/null
sleep 1
fi

# ---- the two paths, straight to the gateways ----
for p in A B; do
  phase "nvme connect path $p" nvme connect -t tcp -a "$(addr_of_path $p)" -s 4420 -n "$NQN" \
    --keep-alive-tmo="$KATO" --reconnect-delay="$RECONNECT" --ctrl-loss-tmo=-1 || { dmesg | tail -20; exit 1; }
done
dev=$(nvme_dev "$NQN") || { echo "no namespace block device"; dmesg | tail -20; exit 1; }
npaths=$(ls -d /sys/class/nvme/nvme*/nvme*c*n1 2>/dev/null | wc -l)
echo "multipath device $dev over $npaths paths: $(cd /sys/class/nvme && ls -d nvme*/nvme*c*n1 | tr '\n' ' ')"
[ "$npaths" = 2 ] && [ "$(ls -d /sys/block/nvme*n1 | grep -vc 'c[0-9]*n1$')" = 1 ] \
  && check "one namespace, two paths (the gateways are one subsystem)" \
  || fail "the gateways did not become one multipath namespace"
dmesg | grep -i "disabling ANA\|ANA log page size" && fail "Linux turned ANA off"
idc=$(nvme id-ctrl /dev/nvme0)
echo "$idc" | grep -E "^(cntlid|ver|cmic|oaes|anatt|anacap|anagrpmax|nanagrpid|mnan|fuses|acwu) "
echo "$idc" | grep -q "^anatt *: 10$" && echo "$idc" | grep -q "^anagrpmax *: 128$" \
  && echo "$idc" | grep -q "^nanagrpid *: 128$" && check "id-ctrl: ANATT 10, ANAGRPMAX and NANAGRPID 128" \
  || fail "id-ctrl ANA fields"
echo "iopolicy: $(cat /sys/class/nvme-subsystem/*/iopolicy 2>/dev/null | head -1)"

# path_state P: sets STATE to "CTRL/ANA" of path P (the controller's state, the ANA state of its
# namespace path); bash builtins only, no process per read (forks are slow under emulation)
path_state() {
  local c a nqn st ana want_addr f
  [ "$1" = A ] && want_addr=$ADDR_A || want_addr=$ADDR_B
  STATE="absent/none"
  for c in /sys/class/nvme/nvme*; do
    read -r nqn <"$c/subsysnqn" 2>/dev/null || continue
    [ "$nqn" = "$NQN" ] || continue
    read -r a <"$c/address" 2>/dev/null || continue
    case $a in *"traddr=$want_addr,"*) ;; *) continue ;; esac
    read -r st <"$c/state" || st=unknown
    ana=none
    for f in "$c"/nvme*c*n1/ana_state; do [ -r "$f" ] && read -r ana <"$f"; done
    STATE="$st/$ana"
    return
  done
}
# ms_now: MS = milliseconds since boot, without a process
ms_now() { local u; read -r u _ </proc/uptime; MS=$(( ${u%.*} * 1000 + 10#${u#*.} * 10 )); }
# cmd_paths SECONDS SPEC...
cmd_paths() {
  local max=$1 s e ok p want got; shift
  local spec="$*"
  ms_now; s=$MS
  while :; do
    ok=1 got=""
    for p in $spec; do
      want=${p#*=}; path_state "${p%%=*}"; got+=" ${p%%=*}=$STATE"
      case "$STATE" in $want|$want/*) ;; *) ok=0 ;; esac
    done
    ms_now; e=$MS
    [ $ok = 1 ] && { echo "paths:$got after $((e - s)) ms"; nvme list-subsys "$dev" 2>&1 | sed 's/^/  /'; return 0; }
    [ $((e - s)) -gt $((max * 1000)) ] && { echo "paths:$got, not $spec after ${max}s"; nvme list-subsys "$dev"; return 1; }
    sleep 0.1
  done
}
cmd_partition() {   # tc drops the path's packets both ways: nothing is closed, nothing arrives
  local a; a=$(addr_of_path "$1")
  tc qdisc add dev eth0 root handle 1: prio 2>/dev/null
  tc qdisc add dev eth0 ingress 2>/dev/null
  tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "$a"/32 action drop &&
  tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip src "$a"/32 action drop &&
  echo "partition: $1 ($a) cut at $(now_ms) ms"
}
cmd_heal() {
  tc filter del dev eth0 parent 1: prio 1 && tc filter del dev eth0 parent ffff: prio 1 &&
  echo "partition: $1 healed at $(now_ms) ms"
}

# ---- the load: fio rounds over 8 MiB, each writing every block once with a CRC32C header,
# verifying as it goes (backlog) and all of it again at the end of the round ----
: >/tmp/fio.status
load() {
  local r=0
  while [ ! -e /tmp/finish ]; do
    r=$((r + 1))
    if fio --name=mp"$r" --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k \
        --size=8M --verify=crc32c --verify_backlog=256 --do_verify=1 --verify_fatal=1 --randseed="$r" \
        --output=/tmp/fio.$r >/dev/null 2>&1; then
      echo "round $r ok" >>/tmp/fio.status
    else
      echo "round $r FAILED" >>/tmp/fio.status; cat /tmp/fio.$r
    fi
  done
}
load &
loadpid=$!
# and a reader that never pauses (the rounds do, between two fio processes), so the host sees
# I/O flow on whichever path serves it at any moment
fio --name=reader --filename="$dev" --direct=1 --ioengine=libaio --iodepth=2 --rw=randread --bs=4k \
  --offset=8M --size=8M --time_based --runtime=3600 --output=/tmp/reader.out >/dev/null 2>&1 &
readerpid=$!
echo "LOAD-RUNNING"

n=1
while :; do
  if [ -f /job/cmd.$n ]; then
    read -r cmd args </job/cmd.$n
    case $cmd in
      partition) cmd_partition $args ;;
      heal) cmd_heal $args ;;
      paths) cmd_paths $args ;;
      finish) touch /tmp/finish; echo "ACK $n ok"; break ;;
      *) false ;;
    esac && echo "ACK $n ok" || { echo "ACK $n FAIL"; rc=1; }
    n=$((n + 1))
  fi
  kill -0 $loadpid 2>/dev/null || { fail "the load ended before the host said finish"; break; }
  sleep 0.1
done
touch /tmp/finish
wait $loadpid
kill -INT $readerpid; wait $readerpid; reader_rc=$?
grep -E "read:|err=" /tmp/reader.out | sed 's/^/  reader: /'
# (its exit status after SIGINT says nothing of errors: its report does)
grep -q "err= *0:" /tmp/reader.out && check "the reader saw no I/O error (fio rc $reader_rc after SIGINT)" \
  || fail "the reader: rc $reader_rc, $(grep -o 'err= *[0-9]*' /tmp/reader.out)"
rounds=$(grep -c ok /tmp/fio.status); bad=$(grep -c FAILED /tmp/fio.status)
errs=$(cat /tmp/fio.* 2>/dev/null | grep -o 'err= *[0-9]*' | grep -vc 'err= *0$')
last=$(ls /tmp/fio.[0-9]* | sort -t. -k2 -n | tail -1)
echo "fio: $rounds rounds verified, $bad failed, $errs jobs with errors; the last:"
grep -E "write:|read:|verify|err=" "$last" | sed 's/^/  /'
[ "$rounds" -ge 2 ] && [ "$bad" = 0 ] && [ "$errs" = 0 ] && check "0 I/O errors, 0 corrupt blocks in $rounds fio rounds" \
  || fail "fio: $bad rounds failed, $errs with errors"
dmesg | grep -iE "nvme|I/O error" | tail -40 | sed 's/^/dmesg: /'
nvme disconnect -n "$NQN" >/dev/null
echo "guest-multipath: rc=$rc"
exit $rc
