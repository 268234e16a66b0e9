#!/bin/bash
# Runs inside the QEMU guest (Debian trixie: Linux 6.12, nvme-stas): nvme-stas' stafd and stacd
# against our central discovery controller. stafd is given the CDC's address alone; it keeps a
# persistent discovery connection there, registers this host (TP8010's explicit registration,
# when the controller says it is a CDC) and reads the log; stacd connects every subsystem the
# log lists. 127.0.0.1:$C, :$T1 and :$T2 are carried to the host's 127.0.0.1 at the same ports.
# The host script checks the CDC's registrations when this prints "STEP 1" (answer in /job/cmd.1).
set -u
. /job/lib.sh
C=${C:?} T1=${T1:?} T2=${T2:?} NQN1=${NQN1:?} NQN2=${NQN2:?}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1
echo "kernel $(uname -r); $(stafd --version 2>&1 | head -1)"
i=0
for p in "$C" "$T1" "$T2"; do
  socat TCP-LISTEN:"$p",bind=127.0.0.1,reuseaddr,fork TCP:10.0.2.$((100 + i)):4420 &
  i=$((i + 1))
done
mkdir -p /run/dbus && dbus-daemon --system --fork || fail "dbus-daemon"
[ -x /lib/systemd/systemd-udevd ] && { /lib/systemd/systemd-udevd --daemon && udevadm trigger --action=add; } >/dev/null 2>&1
cat >/tmp/stafd.conf <<CONF
[Global]
tron=true
[Service Discovery]
zeroconf=disabled
[Controllers]
controller=transport=tcp;traddr=127.0.0.1;trsvcid=$C
CONF
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
for _ in $(seq 600); do [ -f /job/cmd.1 ] && break; sleep 0.2; done
[ "$(cat /job/cmd.1 2>/dev/null)" = ok ] && check "the CDC holds stafd's registration of this host" \
  || fail "the CDC's registrations: $(cat /job/cmd.1 2>/dev/null)"
[ $rc = 0 ] || { echo "--- stafd"; tail -40 /tmp/stafd.log; echo "--- stacd"; tail -20 /tmp/stacd.log; }
pkill stacd; pkill stafd; sleep 2
nvme disconnect-all >/dev/null 2>&1
exit $rc
