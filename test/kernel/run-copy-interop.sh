#!/usr/bin/env bash
# Copy, resize and QoS interop (issue: Copy, resize in place, and QoS):
#   part 1  SPDK's test/nvme/simple_copy against our target (where SPDK is built: $SPDK_DIR,
#           default /var/tmp/spdk; 2 MiB hugepages set up and put back)
#   part 2  Linux 6.12 (a trixie guest) with nvme-cli's `nvme copy` on our target: the Identify
#           fields, one range and two ranges copied, each read back and compared in the guest;
#           resize in place (64 to 256 MiB) under fio randwrite --verify; QoS: fio at QD128 against
#           the lowest limits we allow (100 IOPS; 1 MiB/s with 256 KiB reads, where only the 5 s
#           bound on a wait keeps the host's 30 s I/O timeout from firing)
#   part 3  our initiator's copy against Linux nvmet, which has no Copy: the host reads and writes
# Needs root, QEMU, the built jar (mvn -DskipTests package); the trixie image is built on first
# use in $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie). COPY_PARTS="1 2 3" chooses parts.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "copy interop: build first (mvn -DskipTests package)" >&2; exit 1; }
. "$top/test/kernel/interop.sh"
. "$top/test/kernel/spdk.sh"
TRIXIE=${NVMF_VM_CACHE_TRIXIE:-/var/tmp/nvmf-vm-trixie}
SPDK_DIR=${SPDK_DIR:-/var/tmp/spdk}
PARTS=${COPY_PARTS:-1 2 3}
if [ ! -f "$TRIXIE/rootfs.ext4" ]; then
  echo "== building the trixie guest image in $TRIXIE"
  NVMF_VM_CACHE=$TRIXIE "$vm/build-guest.sh" --suite trixie --java
fi
interop_begin copy
NQN=nqn.2026-11.io.nvmeof:copy
# start_target CONFIG: our target as users run it; sets tpid
start_target() {
  local config=$1; shift
  java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$config" "$@" >"$config.out" 2>"$config.err" &
  tpid=$!
  pids+=($tpid)
  for _ in $(seq 600); do
    grep -q "listening on tcp://" "$config.out" 2>/dev/null && return 0
    kill -0 $tpid 2>/dev/null || break
    sleep 0.1
  done
  echo "our target did not start:"; cat "$config.err"; return 1
}
stop_target() {
  kill -TERM $tpid 2>/dev/null || true; wait $tpid 2>/dev/null || true
  grep -q "LEAK:" "$1.err" && fail "our target reported leaked buffers" || true
}
set +e

if [[ " $PARTS " == *" 1 "* ]]; then
if [ -x "$SPDK_DIR/test/nvme/simple_copy/simple_copy" ]; then
  echo "== SPDK's test/nvme/simple_copy against our target"
  P=$(free_port)
  cat >"$work/spdk.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $P, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/spdk.img", "size": "64M",
                 "direct_io": true}]}]}
JSON
  start_target "$work/spdk.json"
  spdk_run "$work/simple_copy.out" "$SPDK_DIR/test/nvme/simple_copy/simple_copy" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$P subnqn:$NQN"
  rc=$?
  sed 's/^/   /' "$work/simple_copy.out"
  if [ $rc = 0 ] && grep -q "LBAs matching Written Data: 64" "$work/simple_copy.out"; then
    check "SPDK's simple_copy: 64 blocks written, copied by one Copy, read back equal"
  else fail "SPDK's simple_copy (exit $rc)"; fi
  stop_target "$work/spdk.json"
else
  echo "== part 1 SKIPPED: no SPDK build at $SPDK_DIR (bench/spdk/build-spdk.sh builds one)"
fi
fi

if [[ " $PARTS " == *" 2 "* ]]; then
P=$(free_port)
cat >"$work/linux.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $P, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/linux.img", "size": "64M",
                 "direct_io": true}]}]}
JSON
MP=$(free_port)
start_target "$work/linux.json" --rpc-socket "$work/rpc.sock" --metrics "tcp://127.0.0.1:$MP"
echo "== Linux 6.12's nvme copy on our target"
NVMF_VM_CACHE=$TRIXIE guest_boot "$work/gjob" --timeout 900 --mem 1024 --gfwd "10.0.2.100:4420=$P" || exit 1
gsh "modprobe nvme-tcp && nvme connect -t tcp -a 10.0.2.100 -s 4420 -n $NQN >/dev/null && . /job/lib.sh \
  && nvme_dev $NQN >/tmp/dev && cat /tmp/dev" || fail "the Linux host did not connect"
out=$(gsh 'D=$(cat /tmp/dev); nvme id-ctrl $D | grep -E "^(oncs|ocfs)"; nvme id-ns $D | grep -E "^(mssrl|mcl|msrc)"')
echo "$out" | sed 's/^/   /'
echo "$out" | grep -q "^msrc *: 127" && echo "$out" | grep -q "^mcl *: 16384" && echo "$out" | grep -q "^ocfs *: 0x1" \
  && check "Identify: ONCS Copy, OCFS format 0, MSSRL/MCL 16384 blocks, MSRC 127" || fail "the Copy fields in Identify"
out=$(gsh 'D=$(cat /tmp/dev); head -c $((64 * 4096)) /dev/urandom >/tmp/src
  dd if=/tmp/src of=$D bs=4096 oflag=direct status=none &&
  nvme copy $D --sdlba=256 --slbs=0 --blocks=63 && nvme copy $D --sdlba=512 --slbs=10,40 --blocks=4,2 &&
  dd if=$D of=/tmp/a bs=4096 skip=256 count=64 iflag=direct status=none &&
  dd if=$D of=/tmp/b bs=4096 skip=512 count=8 iflag=direct status=none &&
  cmp /tmp/src /tmp/a && { dd if=/tmp/src bs=4096 skip=10 count=5 status=none; dd if=/tmp/src bs=4096 skip=40 count=3 status=none; } | cmp - /tmp/b &&
  echo copied-and-equal')
echo "$out" | sed 's/^/   /'
echo "$out" | grep -q "copied-and-equal" && check "nvme copy: one range and two ranges, read back equal in the guest" \
  || fail "nvme copy"
echo "== resize in place under Linux's fio (randwrite, verify): 64 MiB to 256 MiB"
gsh 'D=$(cat /tmp/dev); cat /sys/block/${D#/dev/}/size >/tmp/size0
  setsid fio --name=grow --filename=$D --rw=randwrite --bs=4k --iodepth=16 --ioengine=libaio --direct=1 --size=32M \
    --time_based --runtime=30 --verify=crc32c --verify_fatal=1 --output=/tmp/fio.out >/dev/null 2>&1 </dev/null &
  sleep 3; pgrep -x fio >/dev/null' && check "fio writes and verifies through /dev/nvme (32 MiB, 30 s)" || fail "fio did not start"
r=$(nvmeof ns resize --socket "$work/rpc.sock" --subsystem "$NQN" --nsid 1 --size 256M 2>&1) && echo "   $r" \
  || fail "nvmeof ns resize: $r"
out=$(gsh 'D=$(cat /tmp/dev); for i in $(seq 200); do [ "$(cat /sys/block/${D#/dev/}/size)" = 524288 ] && break; sleep 0.1; done
  echo "sectors: $(cat /tmp/size0) -> $(cat /sys/block/${D#/dev/}/size)"; dmesg | grep -i "capacity change" | tail -1
  while pgrep -x fio >/dev/null; do sleep 1; done; grep -E "err=|READ:|WRITE:" /tmp/fio.out')
echo "$out" | sed 's/^/   /'
echo "$out" | grep -q "sectors: 131072 -> 524288" && check "Linux sees 256 MiB without reconnecting (/sys/block/.../size)" \
  || fail "Linux did not see the new size"
echo "$out" | grep -q "err= 0" && ! echo "$out" | grep -q "err= *[1-9]" && check "fio: 0 errors across the resize" \
  || fail "fio reported errors across the resize"
# qos_fio NAME FIO-OPTIONS: 40 s of fio at QD128 in the guest (past the host's 30 s I/O timeout);
# prints "iops MiB/s max-latency-s errors" and the guest's timeouts and resets
qos_fio() {
  local name=$1; shift
  gsh -t 200 "D=\$(cat /tmp/dev); dmesg -C; fio --name=$name --filename=\$D --ioengine=libaio --direct=1 --iodepth=128 \
    --size=256M --time_based --runtime=40 --output-format=json --output=/tmp/$name.json $* >/dev/null 2>&1
    echo \"timeouts: \$(dmesg | grep -ciE 'timeout|reset')\"; cat /tmp/$name.json" >"$work/$name.out"
  python3 - "$work/$name.out" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
print(text.splitlines()[0])
j = json.loads(text[text.index("{"):])["jobs"][0]
r = j["read"]
print("fio %.1f IOPS %.2f MiB/s max %.2f s errors %d" % (r["iops"], r["bw_bytes"] / 1048576, r["clat_ns"]["max"] / 1e9, j["error"]))
PY
}
echo "== QoS: Linux at QD128 against 100 IOPS (the lowest we allow), 4 KiB randread"
r=$(nvmeof qos set --socket "$work/rpc.sock" --subsystem "$NQN" --nsid 1 --rw-ios-per-second 100 2>&1) || fail "qos set: $r"
out=$(qos_fio qos-iops --rw=randread --bs=4k); echo "$out" | sed 's/^/   /'
read -r iops maxs errs < <(echo "$out" | sed -n 's/^fio \([0-9.]*\) IOPS .* max \([0-9.]*\) s errors \([0-9]*\)$/\1 \2 \3/p')
if [ "${errs:-1}" = 0 ] && echo "$out" | grep -q "^timeouts: 0" \
   && python3 -c "import sys; sys.exit(not (90 <= $iops <= 110 and $maxs < 5.5))"; then
  check "100 IOPS held at QD128 (${iops} IOPS, longest wait ${maxs} s), 0 errors, no timeout"
else fail "QoS at 100 IOPS: $out"; fi
echo "== QoS: Linux at QD128 against 1 MiB/s (the lowest we allow), 256 KiB randread: 32 MiB outstanding"
r=$(nvmeof qos set --socket "$work/rpc.sock" --subsystem "$NQN" --nsid 1 --rw-megabytes-per-second 1 2>&1) || fail "qos set: $r"
out=$(qos_fio qos-bytes --rw=randread --bs=256k); echo "$out" | sed 's/^/   /'
read -r iops maxs errs < <(echo "$out" | sed -n 's/^fio \([0-9.]*\) IOPS .* max \([0-9.]*\) s errors \([0-9]*\)$/\1 \2 \3/p')
over=$(curl -s "http://127.0.0.1:$MP/metrics" | grep '^nvmeof_namespace_qos_overruns_total' | awk '{print $2}')
echo "   nvmeof_namespace_qos_overruns_total $over"
if [ "${errs:-1}" = 0 ] && echo "$out" | grep -q "^timeouts: 0" \
   && python3 -c "import sys; sys.exit(not ($maxs < 15 and ${over:-0} > 0))"; then
  check "1 MiB/s at QD128 x 256 KiB: 0 errors, no timeout; longest ${maxs} s (the 5 s bound, then the transfer), overruns counted"
else fail "QoS at 1 MiB/s: $out"; fi
gsh "nvme disconnect -n $NQN" >/dev/null
guest_stop "$work/gjob"
stop_target "$work/linux.json"
fi

if [[ " $PARTS " == *" 3 "* ]]; then
P3=$(free_port)
echo "== our initiator's copy against Linux nvmet (no Copy there: the host moves the data)"
NVMF_VM_CACHE=$TRIXIE guest_boot "$work/njob" --timeout 900 --mem 1024 --fwd "tcp:127.0.0.1:$P3-:4420" || exit 1
gsh "modprobe -a nvmet nvmet-tcp && truncate -s 64M /tmp/ns.img && . /job/lib.sh && nvmet_subsys $NQN /tmp/ns.img \
  && nvmet_port 1 tcp 0.0.0.0 4420 $NQN" || fail "nvmet"
for _ in $(seq 100); do python3 "$vm/tools/nvme-tcp-icreq.py" 127.0.0.1 "$P3" >/dev/null 2>&1 && break; sleep 0.2; done
URI="nvme+tcp://127.0.0.1:$P3/$NQN"
head -c $((64 * 4096)) /dev/urandom >"$work/src"
nvmeof write "$URI" -o 0 -d "$work/src" >/dev/null || fail "write to nvmet"
r=$(nvmeof copy "$URI" --sdlba 256 --slbs 0 --blocks 63 2>&1) && echo "   $r" || fail "nvmeof copy against nvmet: $r"
nvmeof read "$URI" -o $((256 * 4096)) -l $((64 * 4096)) -d "$work/back" >/dev/null && cmp "$work/src" "$work/back" \
  && check "our copy against nvmet (MSSRL 0: read and written by the host), read back equal" || fail "copy against nvmet"
guest_stop "$work/njob"
fi

[ $status = 0 ] && echo "copy interop: PASS" || echo "copy interop: FAILED"
exit $status
