#!/bin/bash
# Runs inside the QEMU guest, over the kernel's soft-RoCE (rdma_rxe on eth0), with our jar
# at /mnt/share/nvmeof.jar:
#  (a) our target on the `verbs` provider serves the kernel's NVMe/RDMA host (nvme-rdma +
#      nvme-cli) in the same guest: discover, connect, mkfs.ext4, mount, files written and
#      read back across a remount, fsck -fn, disconnect; a bad connect is refused;
#  (b) our initiator on the `verbs` provider against the kernel's nvmet-rdma target:
#      discover, connect, identify, 16 MiB written at an offset and read back identical.
set -u
. /job/lib.sh
NQN=nqn.2026-11.io.nvmeof:rdma-interop KNQN=nqn.2026-11.io.nvmeof:kernel-rdma-target
JAR=/mnt/share/nvmeof.jar
rc=0
T=120
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
# Every JVM here runs on one vCPU (taskset): HotSpot patches compiled code while other threads
# run it, and QEMU's multi-threaded TCG does not keep that coherent across vCPUs. A pure-Java
# program (no RDMA, no native code of ours) crashed in 3 of 19 starts in this guest, at the entry
# of a C1-compiled method, and in 0 of 30 starts pinned to one vCPU. Real CPUs and KVM are not
# affected; no JVM flag is involved.
PIN="taskset -c 0"
nvmeof() { timeout 300 $PIN java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$JAR" "$@"; }

phase "rxe0 on eth0" rxe_up eth0 || exit 1
ADDR=$(addr_of eth0)
echo "guest address $ADDR, $(java -version 2>&1 | head -1)"

# ---- (a) our target, the kernel's host ----
truncate -s 256M /tmp/ours.img
$PIN java -Xmx512m -XX:TieredStopAtLevel=1 -Dio.netty.leakDetection.level=paranoid -jar "$JAR" target \
  --listen "rdma://$ADDR:4420" --rdma-provider verbs --subsystem "$NQN" --namespace "file:/tmp/ours.img" \
  >/tmp/target.out 2>/tmp/target.err &
tpid=$!
for _ in $(seq 600); do grep -q "listening on rdma" /tmp/target.out 2>/dev/null && break; kill -0 $tpid 2>/dev/null || break; sleep 0.2; done
grep -q "listening on rdma" /tmp/target.out || { echo "our target did not start:"; cat /tmp/target.err; exit 1; }
cat /tmp/target.out
phase "modprobe nvme-rdma" modprobe nvme-rdma || exit 1

log=$(timeout $T nvme discover -t rdma -a "$ADDR" -s 4420 2>&1) || fail "nvme discover: $log"
echo "$log" | grep -E "^(=====|trtype|subtype|subnqn|traddr|rdma_)"
echo "$log" | grep -q "subnqn: *$NQN\$" && check "discover lists $NQN" || fail "discover misses $NQN"
echo "$log" | grep -q "trtype: *rdma" && check "entries say trtype rdma" || fail "no rdma trtype"
echo "$log" | grep -q "rdma_cms: *rdma-cm" && check "RDMA TSAS: rdma-cm" || fail "no RDMA TSAS"

if phase "nvme connect -t rdma" timeout $T nvme connect -t rdma -a "$ADDR" -s 4420 -n "$NQN"; then
  dev=$(nvme_dev "$NQN") || { fail "no namespace block device"; dmesg | tail -20; }
  if [ -n "${dev:-}" ]; then
    for c in /sys/class/nvme/nvme*; do
      [ "$(cat $c/subsysnqn)" = "$NQN" ] && echo "  ${c##*/}: $(cat $c/transport) $(cat $c/address) queue_count=$(cat $c/queue_count)"
    done
    [ "$(blockdev --getsize64 "$dev")" = $((256 << 20)) ] && check "size 256 MiB" || fail "size $(blockdev --getsize64 "$dev")"
    phase "io_check $dev" io_check "$dev" || fail "io_check"
    phase "mkfs.ext4" mkfs.ext4 -q -F "$dev" || fail "mkfs"
    mkdir -p /mnt/ours
    if phase "mount" mount "$dev" /mnt/ours; then
      head -c 12582912 /dev/urandom >/tmp/big
      cp /tmp/big /mnt/ours/big && for i in $(seq 20); do echo "file $i" >/mnt/ours/f$i; done && sync
      umount /mnt/ours && mount "$dev" /mnt/ours || fail "remount"
      cmp /tmp/big /mnt/ours/big && [ "$(cat /mnt/ours/f17)" = "file 17" ] && check "files intact across a remount" \
        || fail "files differ after a remount"
      umount /mnt/ours || fail "umount"
      phase "fsck -fn" fsck.ext4 -fn "$dev" || fail "fsck"
    else
      fail "mount"
    fi
  fi
  phase "nvme disconnect" nvme disconnect -n "$NQN" || fail "disconnect"
else
  fail "nvme connect"; dmesg | tail -20
fi
timeout $T nvme connect -t rdma -a "$ADDR" -s 4420 -n nqn.2026-11.io.nvmeof:nosuch >/dev/null 2>&1 \
  && fail "connect to a subsystem that does not exist succeeded" || check "unknown subsystem refused"
kill -TERM $tpid; wait $tpid; trc=$?
[ $trc = 0 ] && check "our target stopped cleanly" || fail "our target exited $trc"
grep -q "LEAK:" /tmp/target.err && { fail "our target leaked buffers"; cat /tmp/target.err; }
grep -E "WARN|SEVERE|ERROR" /tmp/target.err | head -10
dmesg | grep -iE "nvme|rdma" | tail -8

# ---- (a2) our target as users start it (java -jar, no JVM flags) with a RAM namespace, the
# kernel's host: ROUNDS rounds in this boot, each with a fresh target process: connect, mkfs.ext4,
# mount, files, remount, fsck, disconnect. Any hs_err file or exit of our target fails at once.
RNQN=nqn.2026-11.io.nvmeof:rdma-ram
mkdir -p /tmp/ram && cd /tmp/ram
for round in $(seq "${ROUNDS:-5}"); do
  rm -f /tmp/ram/hs_err_pid*.log /tmp/hs_err_pid*.log
  $PIN java -jar "$JAR" target --listen "rdma://$ADDR:4420" --rdma-provider verbs --subsystem "$RNQN" \
    --namespace ram:512M >/tmp/ram/target.out 2>/tmp/ram/target.err &
  rpid=$!
  for _ in $(seq 600); do grep -q "listening on rdma" /tmp/ram/target.out 2>/dev/null && break; kill -0 $rpid 2>/dev/null || break; sleep 0.2; done
  ok=1
  if ! kill -0 $rpid 2>/dev/null || ! grep -q "listening on rdma" /tmp/ram/target.out; then
    fail "RAM round $round: our target did not start"; ok=0
  elif timeout $T nvme connect -t rdma -a "$ADDR" -s 4420 -n "$RNQN" >/dev/null && dev=$(nvme_dev "$RNQN"); then
    mkfs.ext4 -q -F "$dev" && mkdir -p /mnt/ram && mount "$dev" /mnt/ram \
      && head -c 8388608 /dev/urandom >/tmp/ram/big && cp /tmp/ram/big /mnt/ram/big \
      && for i in $(seq 10); do echo "round $round file $i" >/mnt/ram/f$i; done && sync \
      && umount /mnt/ram && mount "$dev" /mnt/ram && cmp /tmp/ram/big /mnt/ram/big \
      && [ "$(cat /mnt/ram/f7)" = "round $round file 7" ] && umount /mnt/ram && fsck.ext4 -fn "$dev" >/dev/null \
      || { fail "RAM round $round: mkfs/mount/files/fsck"; ok=0; umount /mnt/ram 2>/dev/null; }
    nvme disconnect -n "$RNQN" >/dev/null || fail "RAM round $round: disconnect"
  else
    fail "RAM round $round: nvme connect"; ok=0
  fi
  crash=$(ls /tmp/ram/hs_err_pid*.log /tmp/hs_err_pid*.log 2>/dev/null | head -1)
  if [ -n "$crash" ] || ! kill -0 $rpid 2>/dev/null; then
    fail "RAM round $round: OUR TARGET DIED"
    cat /tmp/ram/target.err | tail -5; [ -n "$crash" ] && sed -n '1,/^---------------  P R O C E S S/p' "$crash" | head -80
    break
  fi
  kill -TERM $rpid; wait $rpid; trc=$?
  [ $trc = 0 ] || fail "RAM round $round: our target exited $trc"
  [ $ok = 1 ] && check "RAM round $round: mkfs, mount, files across a remount, fsck; target alive"
done
cd /

# ---- (b) the kernel's target, our initiator ----
phase "modprobe nvmet nvmet-rdma" modprobe -a nvmet nvmet-rdma || exit 1
truncate -s 128M /tmp/kernel.img
phase "nvmet subsystem $KNQN" nvmet_subsys "$KNQN" /tmp/kernel.img || exit 1
phase "nvmet rdma port $ADDR:4421" nvmet_port 2 rdma "$ADDR" 4421 "$KNQN" || { dmesg | tail -5; exit 1; }
URI="nvme+rdma://$ADDR:4421/$KNQN"
out=$(nvmeof discover -t rdma -a "$ADDR" -s 4421 2>&1) || fail "nvmeof discover: $out"
echo "$out" | grep -E "^(trtype|subnqn|rdma_)"
echo "$out" | grep -q "subnqn:  $KNQN" && check "our discover lists $KNQN" || fail "our discover misses $KNQN"
out=$(nvmeof id-ctrl "$URI" 2>&1) || fail "nvmeof id-ctrl: $out"
echo "$out" | grep -E "^(mn|sn|subnqn|ioccsz|mdts) "
echo "$out" | grep -q "^subnqn *: $KNQN" && check "identify through our initiator" || fail "id-ctrl"
head -c 16777216 /dev/urandom >/tmp/pattern16
phase "nvmeof write 16 MiB at 4 MiB" nvmeof write "$URI" --offset 4194304 --input /tmp/pattern16 || fail "nvmeof write"
phase "nvmeof read 16 MiB at 4 MiB" nvmeof read "$URI" --offset 4194304 --length 16777216 --output /tmp/back16 \
  || fail "nvmeof read"
cmp /tmp/pattern16 /tmp/back16 && check "16 MiB read back identical through nvmet-rdma" || fail "read-back differs"
cmp <(dd if=/tmp/kernel.img bs=1M skip=4 count=16 status=none) /tmp/pattern16 \
  && check "the kernel target's backing file holds the data" || fail "backing file differs"
phase "nvmeof bench randread QD8 3 s" nvmeof bench "$URI" --rw randread --bs 4k --iodepth 8 --runtime 3 || fail "bench"
nvmet_port_del 2
dmesg | grep -iE "nvmet|rdma" | tail -5
[ $rc = 0 ] && echo "RDMA INTEROP: PASS" || echo "RDMA INTEROP: FAIL"
exit $rc
