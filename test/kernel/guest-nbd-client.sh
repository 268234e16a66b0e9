#!/bin/bash
# Runs inside the trixie guest: the kernel's NBD client attaches the export of `nvmeof nbd` on the
# host side ($NBD_HOST:10809, export $NBD_EXPORT), an XFS filesystem goes on it, fio writes and
# verifies files on it (every block read back and checked as it goes) for $RUNTIME s (the host side kills a gateway meanwhile), then it is
# unmounted, checked with xfs_repair -n and detached.
set -u
. /job/lib.sh
NBD_HOST=${NBD_HOST:?} NBD_EXPORT=${NBD_EXPORT:?} RUNTIME=${RUNTIME:-60}
rc=0
phase "modprobe nbd" modprobe nbd nbds_max=2 || exit 1
phase "nbd-client attaches the export" nbd-client "$NBD_HOST" 10809 /dev/nbd0 -N "$NBD_EXPORT" -b 4096 || exit 1
echo "check: /dev/nbd0 is $(blockdev --getsize64 /dev/nbd0) bytes, $(blockdev --getss /dev/nbd0)-byte sectors"
phase "mkfs.xfs" mkfs.xfs -q -f /dev/nbd0 || exit 1
mkdir -p /mnt/x
phase "mount" mount /dev/nbd0 /mnt/x || exit 1
echo "LOAD-RUNNING"
fio --name=onxfs --directory=/mnt/x --rw=randwrite --bs=4k --size=64m --numjobs=2 --iodepth=8 --ioengine=libaio \
  --direct=1 --time_based --runtime="$RUNTIME" --verify=crc32c --verify_fatal=1 --verify_backlog=256 \
  --output-format=terse >/tmp/fio.out 2>&1 || rc=1
errors=$(awk -F';' '{e += $5} END {print e + 0}' /tmp/fio.out)
[ $rc = 0 ] && [ "$errors" = 0 ] && echo "check: fio wrote and verified for $RUNTIME s on XFS over NBD, 0 errors" \
  || { echo "FAILED: fio (exit $rc, errors $errors)"; cat /tmp/fio.out; rc=1; }
phase "umount" umount /mnt/x || rc=1
phase "xfs_repair -n finds nothing" xfs_repair -n /dev/nbd0 || rc=1
phase "nbd-client detaches" nbd-client -d /dev/nbd0 || rc=1
exit $rc
