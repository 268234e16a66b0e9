#!/bin/bash
# Runs inside the QEMU guest (Debian trixie: Linux 6.12, nvme-cli 2.13, nvme-stas 2.4.1) against
# our central discovery controller (TP8010). PEER=nvme-cli (the default): the kernel's NVMe/TCP
# host and nvme-cli; PEER=stas: nvme-stas' stafd and stacd. On the host, two of our targets
# registered their subsystems with it; here 127.0.0.1:$C, :$T1 and :$T2 are carried (socat, then QEMU's
# guestfwd) to the host's 127.0.0.1 at the same ports, so the addresses the CDC lists are right
# here too. With nvme-cli: discover lists both subsystems through the CDC alone, connect-all connects
# both and each namespace reads back what was written; a persistent discovery controller reports
# DCTYPE cdc, and nvme-cli's dim registers this host with the CDC (the host script checks the
# CDC's registrations in between: files /job/cmd.N as in guest-multipath.sh) and deregisters it.
set -u
. /job/lib.sh
C=${C:?} T1=${T1:?} T2=${T2:?} NQN1=${NQN1:?} NQN2=${NQN2:?} PEER=${PEER:-nvme-cli}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1
echo "kernel $(uname -r); $(nvme version 2>&1 | head -1); $(stafd --version 2>&1 | head -1)"
i=0
for p in "$C" "$T1" "$T2"; do
  socat TCP-LISTEN:"$p",bind=127.0.0.1,reuseaddr,fork TCP:10.0.2.$((100 + i)):4420 &
  i=$((i + 1))
done
sleep 0.5
# wait_cmd N: the host's answer to our "STEP N" line
wait_cmd() { for _ in $(seq 600); do [ -f "/job/cmd.$1" ] && return 0; sleep 0.2; done; return 1; }

if [ "$PEER" = stas ]; then
  # nvme-stas: stafd is given the CDC's address alone; it keeps a persistent discovery connection
  # there, registers this host (TP8010's explicit registration, as the controller says it is a CDC)
  # and reads the log; stacd connects every subsystem the log lists.
  mkdir -p /run/dbus && dbus-daemon --system --fork || fail "dbus-daemon"
  [ -x /lib/systemd/systemd-udevd ] && { /lib/systemd/systemd-udevd --daemon && udevadm trigger --action=add; } >/dev/null 2>&1
  printf '[Global]\ntron=true\n[Service Discovery]\nzeroconf=disabled\n[Controllers]\ncontroller=transport=tcp;traddr=127.0.0.1;trsvcid=%s\n' \
    "$C" >/tmp/stafd.conf
  printf '[Global]\ntron=true\n' >/tmp/stacd.conf
  stafd -f /tmp/stafd.conf >/tmp/stafd.log 2>&1 &
  stacd -f /tmp/stacd.conf >/tmp/stacd.log 2>&1 &
  connected() {
    for c in /sys/class/nvme/nvme*; do [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && return 0; done
    return 1
  }
  for _ in $(seq 120); do connected "$NQN1" && connected "$NQN2" && break; sleep 1; done
  for nqn in "$NQN1" "$NQN2"; do
    connected "$nqn" && check "stacd connected $nqn, which only the CDC's log names" || fail "stacd did not connect $nqn"
  done
  connected nqn.2014-08.org.nvmexpress.discovery && check "stafd holds a persistent discovery connection to the CDC" \
    || fail "no discovery connection"
  stafctl ls 2>&1 | head -20
  stacctl ls 2>&1 | head -20
  echo "STEP 1 registered $(cat /etc/nvme/hostnqn 2>/dev/null)"
  wait_cmd 1
  [ "$(cat /job/cmd.1 2>/dev/null)" = ok ] && check "the CDC holds stafd's registration of this host" \
    || fail "the CDC's registrations: $(cat /job/cmd.1 2>/dev/null)"
  [ $rc = 0 ] || { echo "--- stafd"; tail -40 /tmp/stafd.log; echo "--- stacd"; tail -20 /tmp/stacd.log; }
  pkill stacd; pkill stafd; sleep 2
  nvme disconnect-all >/dev/null 2>&1
else
  log=$(nvme discover -t tcp -a 127.0.0.1 -s "$C" 2>&1) || fail "nvme discover: $log"
  echo "$log" | grep -E "^(=====|subtype|trsvcid|subnqn|traddr)"
  for pair in "$NQN1:$T1" "$NQN2:$T2"; do
    nqn=${pair%:*} port=${pair##*:}
    echo "$log" | grep -A3 "subnqn: *$nqn\$" | grep -q "traddr: *127.0.0.1" \
      && echo "$log" | grep -B3 "subnqn: *$nqn\$" | grep -q "trsvcid: *$port\$" \
      && check "the CDC lists $nqn at 127.0.0.1:$port" || fail "the CDC does not list $nqn at 127.0.0.1:$port"
  done

  phase "nvme connect-all through the CDC" nvme connect-all -t tcp -a 127.0.0.1 -s "$C" || fail "connect-all"
  sleep 2
  for nqn in "$NQN1" "$NQN2"; do
    dev=
    for c in /sys/class/nvme/nvme*; do
      [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
      dev=/dev/$(ls "$c" | grep -E "^nvme[0-9]+c?[0-9]*n1$" | sed 's/c[0-9]*n/n/' | head -1)
    done
    [ -n "$dev" ] && [ -b "$dev" ] || { fail "connect-all did not connect $nqn"; continue; }
    head -c 65536 /dev/urandom >/tmp/w
    dd if=/tmp/w of="$dev" bs=64k count=1 oflag=direct status=none && dd if="$dev" of=/tmp/r bs=64k count=1 iflag=direct status=none \
      && cmp -s /tmp/w /tmp/r && check "$nqn ($dev, found through the CDC) reads back what was written" \
      || fail "$nqn read back on $dev"
  done

  # a persistent discovery controller to the CDC: its type, then nvme-cli's explicit registration
  out=$(nvme discover --persistent -t tcp -a 127.0.0.1 -s "$C" 2>&1) || fail "nvme discover --persistent: $out"
  dc=
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn")" = nqn.2014-08.org.nvmexpress.discovery ] && dc=$(basename "$c")
  done
  [ -n "$dc" ] || { fail "no persistent discovery controller"; exit 1; }
  # the kernel reads CNTRLTYPE and DCTYPE from Identify Controller and shows them in sysfs
  dctype=$(cat "/sys/class/nvme/$dc/dctype" 2>/dev/null)
  cntrltype=$(cat "/sys/class/nvme/$dc/cntrltype" 2>/dev/null)
  [ "$dctype" = cdc ] && [ "$cntrltype" = discovery ] \
    && check "the persistent discovery controller $dc is a $cntrltype controller of type $dctype (DCTYPE 2)" \
    || fail "$dc: cntrltype '$cntrltype', dctype '$dctype'"
  nvme dim --device="$dc" --task=register -v && check "nvme dim registered this host" || fail "nvme dim --task=register"
  echo "STEP 1 registered $(cat /etc/nvme/hostnqn 2>/dev/null)"
  wait_cmd 1 && [ "$(cat /job/cmd.1)" = ok ] && check "the CDC holds this host's registration" \
    || fail "the CDC's registrations: $(cat /job/cmd.1 2>/dev/null)"
  nvme dim --device="$dc" --task=deregister -v && check "nvme dim deregistered this host" || fail "nvme dim --task=deregister"
  echo "STEP 2 deregistered"
  wait_cmd 2 && [ "$(cat /job/cmd.2)" = ok ] && check "the CDC dropped this host's registration" \
    || fail "after deregistration: $(cat /job/cmd.2 2>/dev/null)"

  dmesg | grep -iE "nvme.*(error|fail|timeout)" && fail "the kernel logged NVMe errors" || check "no NVMe errors in the kernel log"
  nvme disconnect-all && check "disconnected" || fail "nvme disconnect-all"
fi
exit $rc
