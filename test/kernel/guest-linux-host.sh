#!/bin/bash
# Runs inside the QEMU guest: the Linux kernel's NVMe/TCP host (nvme-tcp + nvme-cli)
# against our target, reached at $TADDR:4420; a second target that allows only another
# host NQN is at $TADDR_LOCKED:4420. Digests off, then header and data digests on.
set -u
. /job/lib.sh
TADDR=${TADDR:?} TADDR_LOCKED=${TADDR_LOCKED:?} NQN=${NQN:?} NQN_LOCKED=${NQN_LOCKED:?} SIZE=${SIZE:?}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1
for dg in "" "--hdr-digest --data-digest"; do
  phase "nvme connect ${dg:-(no digests)}" nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN" $dg \
    || { dmesg | tail -20; exit 1; }
  dev=$(nvme_dev "$NQN") || { echo "no namespace block device"; dmesg | tail -20; exit 1; }
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//')
  got=$(blockdev --getsize64 "$dev")
  [ "$got" = "$SIZE" ] && check "$dev is $got bytes" || fail "$dev is $got bytes, expected $SIZE"
  [ "$(blockdev --getss "$dev")" = 4096 ] && check "4096-byte logical blocks" || fail "logical block size"
  idc=$(nvme id-ctrl "$ctrl") || fail "nvme id-ctrl"
  echo "$idc" | grep -E "^(sn|mn|fr|mdts|cntlid|ver|kas|sqes|cqes|maxcmd|nn|vwc|sgls|subnqn|ioccsz|iorcsz) "
  echo "$idc" | grep -q "^subnqn *: $NQN\$" && check "id-ctrl subnqn" || fail "id-ctrl subnqn"
  echo "$idc" | grep -q "^mn *: nvmeof-java" && check "id-ctrl mn" || fail "id-ctrl mn"
  echo "$idc" | grep -q "^sqes *: 0x66" && echo "$idc" | grep -q "^cqes *: 0x44" && check "sqes/cqes" || fail "sqes/cqes"
  idn=$(nvme id-ns "$dev") || fail "nvme id-ns"
  echo "$idn" | grep -E "^(nsze|ncap|nuse|nlbaf|flbas|lbaf  0)"
  echo "$idn" | grep -q "^nsze *: $(printf '%#x' $((SIZE / 4096)))\$" && check "id-ns nsze" || fail "id-ns nsze"
  phase "io_check" io_check "$dev" || rc=1
  phase "mkfs.ext4" mkfs.ext4 -q -F "$dev" || rc=1
  mkdir -p /mnt/t && phase "mount" mount "$dev" /mnt/t || rc=1
  head -c 20000000 /dev/urandom >/tmp/f1 && mkdir -p /mnt/t/d && cp /tmp/f1 /mnt/t/d/f1 &&
    for i in $(seq 50); do echo "file $i" >/mnt/t/d/small$i; done && sync &&
    umount /mnt/t && mount "$dev" /mnt/t && cmp /tmp/f1 /mnt/t/d/f1 && [ "$(cat /mnt/t/d/small37)" = "file 37" ] &&
    check "files survive umount/mount" || fail "file round trip"
  umount /mnt/t
  phase "fsck -fn" fsck.ext4 -fn "$dev" || rc=1
  phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1
done
# A host NQN the locked subsystem does not list is refused at Connect.
if nvme connect -t tcp -a "$TADDR_LOCKED" -s 4420 -n "$NQN_LOCKED" 2>/tmp/refused; then
  fail "connect to $NQN_LOCKED was accepted"; nvme disconnect -n "$NQN_LOCKED"
else
  check "connect to $NQN_LOCKED refused: $(head -1 /tmp/refused)"
fi
dmesg | grep -i 'nvme' | grep -v EXT4 | tail -12
[ $rc = 0 ] && echo "KERNEL HOST INTEROP: PASS" || echo "KERNEL HOST INTEROP: FAIL"
exit $rc
