#!/bin/bash
# Runs inside the QEMU guest: the Linux kernel's NVMe/TCP host (nvme-tcp + nvme-cli)
# against our target. $TADDR:4420 reaches its I/O port (subsystems $NQN and $NQN_LOCKED,
# the latter for another host only), $DADDR:8009 its discovery-only port. Digests off,
# then header and data digests on; a namespace added by a config reload mid-run must appear.
set -u
. /job/lib.sh
TADDR=${TADDR:?} DADDR=${DADDR:?} NQN=${NQN:?} NQN_LOCKED=${NQN_LOCKED:?} SIZE=${SIZE:?} SIZE2=${SIZE2:?}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1

# discovery: on the discovery-only port and on the I/O port, only what this host may see
for where in "$DADDR 8009" "$TADDR 4420"; do
  set -- $where
  log=$(nvme discover -t tcp -a "$1" -s "$2" 2>&1) || fail "nvme discover -a $1 -s $2: $log"
  echo "$log" | grep -E "^(=====|trtype|subtype|portid|trsvcid|subnqn|traddr)"
  echo "$log" | grep -q "subnqn: *$NQN\$" && check "discover $1:$2 lists $NQN" || fail "discover $1:$2 misses $NQN"
  echo "$log" | grep -q "$NQN_LOCKED" && fail "discover $1:$2 shows $NQN_LOCKED to a host it does not allow" \
    || check "discover $1:$2 hides $NQN_LOCKED"
  echo "$log" | grep -q "subtype: *current discovery subsystem" && check "current discovery subsystem entry" \
    || fail "no current discovery subsystem entry"
done

first=1
for dg in "" "--hdr-digest --data-digest"; do
  phase "nvme connect ${dg:-(no digests)}" nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN" $dg \
    || { dmesg | tail -20; exit 1; }
  dev=$(nvme_dev "$NQN") || { echo "no namespace block device"; dmesg | tail -20; exit 1; }
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//')
  got=$(blockdev --getsize64 "$dev")
  [ "$got" = "$SIZE" ] && check "$dev is $got bytes" || fail "$dev is $got bytes, expected $SIZE"
  [ "$(blockdev --getss "$dev")" = 4096 ] && check "4096-byte logical blocks" || fail "logical block size"
  idc=$(nvme id-ctrl "$ctrl") || fail "nvme id-ctrl"
  echo "$idc" | grep -E "^(sn|mn|fr|mdts|cntlid|ver|oaes|kas|sqes|cqes|maxcmd|nn|oncs|fuses|vwc|sgls|subnqn|ioccsz|iorcsz) "
  echo "$idc" | grep -q "^subnqn *: $NQN\$" && check "id-ctrl subnqn" || fail "id-ctrl subnqn"
  echo "$idc" | grep -q "^mn *: nvmeof-java" && check "id-ctrl mn" || fail "id-ctrl mn"
  echo "$idc" | grep -q "^sqes *: 0x66" && echo "$idc" | grep -q "^cqes *: 0x44" && check "sqes/cqes" || fail "sqes/cqes"
  idn=$(nvme id-ns "$dev") || fail "nvme id-ns"
  echo "$idn" | grep -E "^(nsze|ncap|nuse|nlbaf|flbas|dlfeat|lbaf  0)"
  echo "$idn" | grep -q "^nsze *: $(printf '%#x' $((SIZE / 4096)))\$" && check "id-ns nsze" || fail "id-ns nsze"
  phase "io_check" io_check "$dev" || rc=1
  phase "blkdiscard" blkdiscard -f -o 1048576 -l 1048576 "$dev" || rc=1
  [ "$(dd if="$dev" bs=1M skip=1 count=1 iflag=direct status=none | tr -d '\0' | wc -c)" = 0 ] \
    && check "discarded range reads zeroes" || fail "discarded range is not zero"
  phase "mkfs.ext4" mkfs.ext4 -q -F "$dev" || rc=1
  mkdir -p /mnt/t && phase "mount" mount "$dev" /mnt/t || rc=1
  head -c 20000000 /dev/urandom >/tmp/f1 && mkdir -p /mnt/t/d && cp /tmp/f1 /mnt/t/d/f1 &&
    for i in $(seq 50); do echo "file $i" >/mnt/t/d/small$i; done && sync &&
    umount /mnt/t && mount "$dev" /mnt/t && cmp /tmp/f1 /mnt/t/d/f1 && [ "$(cat /mnt/t/d/small37)" = "file 37" ] &&
    check "files survive umount/mount" || fail "file round trip"
  umount /mnt/t
  phase "fsck -fn" fsck.ext4 -fn "$dev" || rc=1
  if [ $first = 1 ]; then
    # the host script adds namespace 2 to the config and sends SIGHUP when it sees this line
    echo "READY-FOR-RELOAD"
    ns2=""
    for i in $(seq 600); do
      for b in /sys/block/nvme*n2; do
        case ${b##*/} in nvme*c*n*) continue ;; esac   # hidden per-path devices
        [ -e "$b" ] && ns2=/dev/${b##*/}
      done
      [ -n "$ns2" ] && break
      sleep 0.1
    done
    if [ -n "$ns2" ]; then
      check "namespace 2 appeared after the target's config reload: $ns2"
      [ "$(blockdev --getsize64 "$ns2")" = "$SIZE2" ] && check "$ns2 is $SIZE2 bytes" || fail "$ns2 size"
      head -c 1048576 /dev/urandom >/tmp/p2 && dd if=/tmp/p2 of="$ns2" bs=1M oflag=direct status=none &&
        dd if="$ns2" of=/tmp/b2 bs=1M count=1 iflag=direct status=none && cmp /tmp/p2 /tmp/b2 &&
        check "namespace 2 read-back" || fail "namespace 2 I/O"
    else
      fail "namespace 2 did not appear within 60 s"; dmesg | tail -5
    fi
    first=0
  fi
  phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1
done
# A host NQN the locked subsystem does not list is refused at Connect.
if nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN_LOCKED" 2>/tmp/refused; then
  fail "connect to $NQN_LOCKED was accepted"; nvme disconnect -n "$NQN_LOCKED"
else
  check "connect to $NQN_LOCKED refused: $(head -1 /tmp/refused)"
fi
dmesg | grep -i 'nvme' | grep -v EXT4 | tail -12
[ $rc = 0 ] && echo "KERNEL HOST INTEROP: PASS" || echo "KERNEL HOST INTEROP: FAIL"
exit $rc
