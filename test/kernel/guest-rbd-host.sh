#!/bin/bash
# Runs inside the trixie guest: the kernel's NVMe/TCP host against our target on the host side
# (at $TADDR:4420), whose namespace 1 is a Ceph RBD image. fio writes $SIZE of it through the
# kernel's block device, every block with a CRC32C header, and reads it back verifying them;
# the host side then verifies the same blocks with fio's own rbd engine, from the image itself.
set -u
. /job/lib.sh
NQN=${NQN:?} TADDR=${TADDR:?} SIZE=${SIZE:?}
rc=0
phase "modprobe" modprobe nvme-tcp || exit 1
phase "nvme connect" nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN" || exit 1
dev=$(nvme_dev "$NQN") || { echo "FAILED: no block device for $NQN"; exit 1; }
echo "check: $dev is $(cat /sys/block/${dev#/dev/}/size) sectors, NGUID $(cat /sys/block/${dev#/dev/}/nguid 2>/dev/null)"
phase "fio write and verify through the kernel" fio --name=rbdcheck --filename="$dev" --rw=write --bs=64k \
  --size="$SIZE" --direct=1 --ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 --minimal >/tmp/fio.out || rc=1
[ $rc = 0 ] && echo "check: fio wrote and verified $SIZE bytes through $dev" || cat /tmp/fio.out
nvme disconnect -n "$NQN" >/dev/null
exit $rc
