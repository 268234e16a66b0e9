#!/bin/bash
# Runs inside the QEMU guest: the Linux kernel's NVMe/TCP host and nvme-cli against our target
# at scale. $TADDR:4420 reaches a target with $SUBSYSTEMS subsystems: nvme-cli reads a discovery
# log of that many entries; then the host connects $BIG, a subsystem of $BIG_NS namespaces, and
# every one of them must appear as a block device; the last one reads what the host here wrote.
set -u
. /job/lib.sh
TADDR=${TADDR:?} SUBSYSTEMS=${SUBSYSTEMS:?} BIG=${BIG:?} BIG_NS=${BIG_NS:?}
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe nvme-tcp" modprobe nvme-tcp || exit 1

log=$(nvme discover -t tcp -a "$TADDR" -s 4420 2>&1) || fail "nvme discover: $(echo "$log" | tail -3)"
entries=$(echo "$log" | grep -c "^subtype: *nvme subsystem")
[ "$entries" = "$SUBSYSTEMS" ] && check "nvme discover read $entries subsystem entries" \
  || fail "nvme discover read $entries subsystem entries, expected $SUBSYSTEMS"
echo "$log" | grep -q "subnqn: *$BIG\$" && check "the log lists $BIG" || fail "the log misses $BIG"
json=$(nvme discover -t tcp -a "$TADDR" -s 4420 -o json 2>&1) || fail "nvme discover -o json"
[ "$(echo "$json" | grep -c '"subnqn"')" -ge "$SUBSYSTEMS" ] && check "the JSON log has every record" \
  || fail "the JSON log has $(echo "$json" | grep -c '"subnqn"') records"

phase "nvme connect $BIG" nvme connect -t tcp -a "$TADDR" -s 4420 -n "$BIG" || { dmesg | tail -20; exit 1; }
n=0
for _ in $(seq 600); do
  n=$(ls -d /sys/block/nvme*n* 2>/dev/null | grep -vc "c[0-9]*n" || true)
  [ "$n" -ge "$BIG_NS" ] && break
  sleep 1
done
[ "$n" = "$BIG_NS" ] && check "all $n namespaces appeared as block devices" || fail "$n of $BIG_NS namespaces appeared"
ctrl=$(ls /sys/class/nvme | head -1)
last=$(ls -d /sys/block/nvme*n* | grep -v "c[0-9]*n" | sed 's/.*n//' | sort -n | tail -1)
[ "$last" = "$BIG_NS" ] && check "the last is namespace $last" || fail "the last namespace is $last"
nn=$(nvme id-ctrl "/dev/$ctrl" | sed -n 's/^nn *: //p')
[ "$((nn))" -ge "$BIG_NS" ] && check "id-ctrl nn $nn" || fail "id-ctrl nn $nn"
dev=/dev/$(ls /sys/block | grep -v "c[0-9]*n" | grep "n$BIG_NS\$" | head -1)
head -c 1048576 /dev/urandom >/tmp/w
dd if=/tmp/w of="$dev" bs=1M count=1 oflag=direct status=none && dd if="$dev" of=/tmp/r bs=1M count=1 iflag=direct status=none \
  && cmp /tmp/w /tmp/r && check "$dev reads back what was written" || fail "$dev read back"
dmesg | grep -iE "nvme.*(error|fail|timeout)" && fail "the kernel logged NVMe errors" || check "no NVMe errors in the kernel log"
# nvme-cli opens every namespace's device to find the controller: 1,024 of them exceed the
# shell's default limit of 1,024 descriptors (it then fails with EMFILE, and says so)
ulimit -n 8192
out=$(nvme disconnect -n "$BIG" 2>&1)
echo "$out"
echo "$out" | grep -q "disconnected 1 controller" && [ -z "$(ls /sys/class/nvme)" ] && check "disconnected" \
  || fail "nvme disconnect"
exit $rc
