#!/bin/bash
# guest-spdk-rdma.sh - SPDK's NVMe/RDMA host against our target, over soft-RoCE inside the guest:
# our target on the verbs provider (java -jar, no JVM flags) with a RAM namespace; then
# spdk_nvme_identify and ROUNDS x (spdk_nvme_perf randread, randwrite), each of which must
# succeed with I/O done. The share holds nvmeof.jar, bin/ (spdk_nvme_perf, spdk_nvme_identify)
# and lib/ (SPDK's shared libraries); run-kernel-interop.sh assembles it where SPDK is built.
set -u
. /job/lib.sh
S=/mnt/share
NQN=nqn.2026-11.io.nvmeof:spdk-rdma
ROUNDS=${ROUNDS:-5}
rc=0
fail() { echo "FAILED: $*"; rc=1; }
phase "rxe0 on eth0" rxe_up eth0 >/dev/null || exit 1
ADDR=$(addr_of eth0)
mkdir -p /tmp/t && cd /tmp/t
# (our JVM on vCPU 1, SPDK's polling host on vCPU 0: HotSpot's cross-modifying code is not
# reliable across the vCPUs of QEMU's multi-threaded TCG, see guest-rdma.sh)
taskset -c 1 java -jar $S/nvmeof.jar target --listen "rdma://$ADDR:4420" --rdma-provider verbs --subsystem "$NQN" \
  --namespace ram:512M >/tmp/t/target.out 2>/tmp/t/target.err &
tpid=$!
for _ in $(seq 600); do grep -q "listening on rdma" /tmp/t/target.out 2>/dev/null && break; kill -0 $tpid 2>/dev/null || break; sleep 0.2; done
grep -q "listening on rdma" /tmp/t/target.out || { echo "our target did not start"; cat /tmp/t/target.err; exit 1; }
R="trtype:RDMA adrfam:IPv4 traddr:$ADDR trsvcid:4420 subnqn:$NQN"
export LD_LIBRARY_PATH=$S/lib
out=$(timeout -k 5 120 $S/bin/spdk_nvme_identify --no-huge -s 512 -r "$R" 2>&1); irc=$?
echo "$out" | grep -E "^(Model Number|Serial Number|Subsystem NQN|Namespace ID:|Size \(in LBAs\)|Transport Type)" | head -8
if [ $irc = 0 ] && echo "$out" | grep -q "Model Number: *nvmeof-java"; then echo "check: spdk_nvme_identify over RDMA"
else fail "spdk_nvme_identify rc=$irc"; echo "$out" | grep -iE "error|fail" | head -10; fi
for i in $(seq "$ROUNDS"); do
  for w in randread randwrite; do
    timeout -k 5 120 $S/bin/spdk_nvme_perf --no-huge -s 512 -c 0x1 -q 16 -o 4096 -w $w -t 3 -r "$R" >/tmp/t/perf.out 2>&1; prc=$?
    total=$(grep -E "^Total" /tmp/t/perf.out | tail -1)
    iops=$(echo "$total" | awk '{print int($3)}')
    if [ $prc = 0 ] && [ "${iops:-0}" -gt 0 ]; then echo "check: perf $w round $i: $iops IOPS"
    else fail "perf $w round $i (rc=$prc)"; grep -vE "^\s*$" /tmp/t/perf.out | tail -8; fi
  done
done
kill -0 $tpid 2>/dev/null || fail "our target died"
ls /tmp/t/hs_err_pid*.log 2>/dev/null && fail "our target crashed"
kill -TERM $tpid; wait $tpid; trc=$?
[ $trc = 0 ] || fail "our target exited $trc"
grep -E "WARN|SEVERE" /tmp/t/target.err | head -10
[ $rc = 0 ] && echo "SPDK RDMA INTEROP: PASS" || echo "SPDK RDMA INTEROP: FAIL"
exit $rc
