#!/bin/bash
# Runs inside the trixie guest (kernel 6.12, nvme-cli 2.13): the kernel's NVMe/TCP host with
# DH-HMAC-CHAP against our target, reached at $TADDR:4420 (subsystem $NQN). Host 1 ($HOST1,
# key $KEY1, controller key $CKEY1) gets the target's defaults (strongest hash and group);
# host 2 is limited to SHA-256 and ffdhe3072, host 3 to SHA-384 and the NULL group. Checks
# that authentication really ran (the kernel's own log lines), mkfs/mount/verify through an
# authenticated connection, re-authentication, that wrong or missing keys are refused, that
# host 4 (which the target knows by a TLS key) is refused in the clear, and key rotation: the
# target's key for host 1 changes (the host script rewrites it and reloads the target when
# this prints ROTATE-KEY), the controller ends, the old key fails, the new one gets in; and a
# controller whose dhchap_secret is changed while it waits to reconnect comes back.
set -u
. /job/lib.sh
TADDR=${TADDR:?} NQN=${NQN:?} HOST1=${HOST1:?} KEY1=${KEY1:?} CKEY1=${CKEY1:?}
HOST2=${HOST2:?} KEY2=${KEY2:?} HOST3=${HOST3:?} KEY3=${KEY3:?} HOST4=${HOST4:?} KEY1B=${KEY1B:?} KEY1C=${KEY1C:?}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1
uname -r; nvme version | head -1
connect() { nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN" "$@"; }
# expect_auth HASH GROUP [controller]: the kernel logged that qid 0 authenticated so
expect_auth() {
  local line
  line=$(dmesg | grep "qid 0: authenticated with hash" | tail -1)
  echo "  kernel: ${line#*] }"
  echo "$line" | grep -q "authenticated with hash $1 dhgroup $2" && check "kernel host authenticated with $1, $2" \
    || fail "expected 'authenticated with hash $1 dhgroup $2'"
  if [ "${3:-}" = controller ]; then
    dmesg | grep -q "qid 0: controller authenticated" && check "kernel host authenticated the controller" \
      || fail "no 'qid 0: controller authenticated'"
  fi
}
refused() {
  local what=$1; shift
  if connect "$@" >/tmp/refused.log 2>&1; then
    fail "$what: connect succeeded"; nvme disconnect -n "$NQN" >/dev/null 2>&1
  else
    check "$what: refused ($(tail -1 /tmp/refused.log))"
  fi
  nvme_dev "$NQN" >/dev/null 2>&1 && { fail "$what: a device appeared"; nvme disconnect -n "$NQN"; }
  return 0
}

# 1. one-way authentication, the target's defaults: a filesystem through it, then re-authentication
dmesg -C
phase "connect host 1, one-way" connect --hostnqn="$HOST1" --dhchap-secret="$KEY1" || { dmesg | tail; exit 1; }
expect_auth "hmac(sha512)" ffdhe2048
if dev=$(nvme_dev "$NQN"); then
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//'); ctrl=${ctrl#/dev/}
  grep -H . /sys/class/nvme/$ctrl/dhchap_secret 2>/dev/null | sed 's/DHHC-1:\(..\):.*/DHHC-1:\1:<key>/'
  phase "io_check" io_check "$dev" || rc=1
  phase "mkfs.ext4" mkfs.ext4 -q -F "$dev" || rc=1
  mkdir -p /mnt/t && phase "mount" mount "$dev" /mnt/t || rc=1
  head -c 8000000 /dev/urandom >/tmp/f1 && cp /tmp/f1 /mnt/t/f1 && sync && umount /mnt/t && mount "$dev" /mnt/t &&
    cmp /tmp/f1 /mnt/t/f1 && check "file survives umount/mount on an authenticated connection" || fail "file round trip"
  umount /mnt/t
  phase "fsck -fn" fsck.ext4 -fn "$dev" || rc=1
  # writing the key (even the same) makes the kernel authenticate the live controller again
  n0=$(dmesg | grep -c "qid 0: authenticated with hash")
  echo "$KEY1" >/sys/class/nvme/$ctrl/dhchap_secret
  for _ in $(seq 100); do [ "$(dmesg | grep -c 'qid 0: authenticated with hash')" -gt "$n0" ] && break; sleep 0.2; done
  [ "$(dmesg | grep -c 'qid 0: authenticated with hash')" -gt "$n0" ] && check "re-authentication of the live controller" \
    || fail "no re-authentication after writing dhchap_secret"
  phase "io_check after re-authentication" io_check "$dev" || rc=1
else fail "no namespace device"; fi
phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1

# authenticated TITLE HASH GROUP [controller] -- CONNECT-ARGS: connect, check the kernel's log, I/O, disconnect
authenticated() {
  local title=$1 hash=$2 group=$3 ctrl=; shift 3
  [ "$1" = controller ] && { ctrl=controller; shift; }
  [ "$1" = -- ] && shift
  dmesg -C
  phase "connect $title" connect "$@" || { dmesg | tail; exit 1; }
  expect_auth "$hash" "$group" $ctrl
  if dev=$(nvme_dev "$NQN"); then phase "io_check" io_check "$dev" || rc=1; else fail "no namespace device"; fi
  phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1
}
# 2. bidirectional: the kernel makes our controller prove its key
authenticated "host 1, bidirectional" "hmac(sha512)" ffdhe2048 controller -- \
  --hostnqn="$HOST1" --dhchap-secret="$KEY1" --dhchap-ctrl-secret="$CKEY1"
# 3. host 2: SHA-256 and ffdhe3072 only, an untransformed 64-byte key; bidirectional
authenticated "host 2" "hmac(sha256)" ffdhe3072 controller -- \
  --hostnqn="$HOST2" --dhchap-secret="$KEY2" --dhchap-ctrl-secret="$CKEY1"
# 4. host 3: SHA-384 and the NULL group (no Diffie-Hellman)
authenticated "host 3" "hmac(sha384)" null -- --hostnqn="$HOST3" --dhchap-secret="$KEY3"

# 5. refusals: another host's key, no key, a controller key the controller does not hold
dmesg -C
refused "host 1 with host 2's key" --hostnqn="$HOST1" --dhchap-secret="$KEY2"
refused "host 1 without a key" --hostnqn="$HOST1"
refused "host 3 expecting host 1's controller key" --hostnqn="$HOST3" --dhchap-secret="$KEY3" --dhchap-ctrl-secret="$CKEY1"
# a host the target knows by a TLS key, in the clear: an NQN claimed is no proof
refused "host 4 (it has a TLS key) in the clear" --hostnqn="$HOST4"
dmesg | grep -iE "auth|nvme" | tail -8

# 6. key rotation: the target's key for host 1 changes while host 1 is connected with the old one
dmesg -C
phase "connect host 1 before the rotation" connect --hostnqn="$HOST1" --dhchap-secret="$KEY1" \
  --reconnect-delay=2 --ctrl-loss-tmo=120 || { dmesg | tail; exit 1; }
if dev=$(nvme_dev "$NQN"); then
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//'); ctrl=${ctrl#/dev/}
  echo "ROTATE-KEY $ctrl"
  state=live
  for _ in $(seq 300); do state=$(cat /sys/class/nvme/$ctrl/state 2>/dev/null || echo gone); [ "$state" != live ] && break; sleep 0.2; done
  [ "$state" != live ] && check "the target ended host 1's controller when its key changed (now $state)" \
    || fail "host 1's controller stayed live after its key changed"
  # the host reconnects by itself, with the old key, and fails
  for _ in $(seq 150); do dmesg | grep -qiE "authentication failed|qid 0: .*failed|failed to authenticate" && break; sleep 0.2; done
  dmesg | grep -iE "authentication failed|qid 0: .*failed|failed to authenticate" | tail -1 | sed 's/^/  kernel: /'
  dmesg | grep -qiE "authentication failed|qid 0: .*failed|failed to authenticate" \
    && check "reconnecting with the old key fails" || fail "no failed authentication with the old key"
  if [ -e /sys/class/nvme/$ctrl/dhchap_secret ]; then
    # still trying: the new key, written where the kernel keeps it, lets the next attempt in
    echo "$KEY1B" >/sys/class/nvme/$ctrl/dhchap_secret
    for _ in $(seq 300); do [ "$(cat /sys/class/nvme/$ctrl/state 2>/dev/null)" = live ] && break; sleep 0.2; done
    [ "$(cat /sys/class/nvme/$ctrl/state 2>/dev/null)" = live ] \
      && check "host 1 reconnected once its dhchap_secret was changed to the new key" \
      || fail "host 1 did not reconnect with the new key (state $(cat /sys/class/nvme/$ctrl/state 2>/dev/null))"
  else
    # the kernel gave the controller up after the refusal: connect anew with the new key
    echo "  (the kernel removed the controller after the refusal; connecting anew)"
    phase "connect host 1 with the new key" connect --hostnqn="$HOST1" --dhchap-secret="$KEY1B" \
      && check "host 1 connected with the new key" || fail "host 1 cannot connect with the new key"
  fi
  if dev=$(nvme_dev "$NQN"); then phase "io_check with the new key" io_check "$dev" || rc=1; else fail "no device after the rotation"; fi
  nvme disconnect -n "$NQN" >/dev/null 2>&1
  refused "host 1 with the old key, after the rotation" --hostnqn="$HOST1" --dhchap-secret="$KEY1"
else fail "no namespace device before the rotation"; fi

# 7. a second rotation, the host's secret changed while the controller waits to reconnect: the
# same controller comes back with the new key (reconnect_delay 10 s leaves the time to change it)
dmesg -C
phase "connect host 1 with the second key" connect --hostnqn="$HOST1" --dhchap-secret="$KEY1B" \
  --reconnect-delay=10 --ctrl-loss-tmo=120 || { dmesg | tail; exit 1; }
if dev=$(nvme_dev "$NQN"); then
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//'); ctrl=${ctrl#/dev/}
  echo "ROTATE-KEY $ctrl (second)"
  state=live
  for _ in $(seq 300); do state=$(cat /sys/class/nvme/$ctrl/state 2>/dev/null || echo gone); [ "$state" != live ] && break; sleep 0.2; done
  [ "$state" != live ] && check "the second key change ended the controller too (now $state)" \
    || fail "host 1's controller stayed live after the second key change"
  echo "$KEY1C" >/sys/class/nvme/$ctrl/dhchap_secret
  for _ in $(seq 300); do [ "$(cat /sys/class/nvme/$ctrl/state 2>/dev/null)" = live ] && break; sleep 0.2; done
  [ "$(cat /sys/class/nvme/$ctrl/state 2>/dev/null)" = live ] \
    && check "host 1's controller $ctrl reconnected once its dhchap_secret was changed" \
    || fail "host 1 did not reconnect with the changed dhchap_secret (state $(cat /sys/class/nvme/$ctrl/state 2>/dev/null))"
  phase "io_check after reconnecting" io_check "$dev" || rc=1
  nvme disconnect -n "$NQN" >/dev/null 2>&1
else fail "no namespace device before the second rotation"; fi
echo "SECURITY-HOST-DONE rc=$rc"
exit $rc
