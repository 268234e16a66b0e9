#!/bin/bash
# guest-rdma-conformance.sh - the RDMA provider conformance suite (fabric's RdmaProviderConformance,
# run by ProviderConformanceMain) on real verbs: rxe0 on eth0 inside the QEMU guest, one process
# listening on the guest's address and connecting to itself through rxe0.
#   verbs, completion channels (event mode)
#   verbs, busy polling (the program's busy-poll argument)
#   disni, when libdisni.so is in the share (built from DiSNI's sources; never committed)
# The share holds nvmeof.jar, the test classes of fabric and rdma (test-classes/) and the JUnit API jars
# (junit/); run-kernel-interop.sh assembles it. Env: NETDEV (eth0), PORT (4420), JAVA_TIMEOUT (420 s).
set -u
. /job/lib.sh
NETDEV=${NETDEV:-eth0} PORT=${PORT:-4420} JAVA_TIMEOUT=${JAVA_TIMEOUT:-420}
S=/mnt/share
phase "rxe0 on $NETDEV" rxe_up "$NETDEV" >/dev/null || exit 1
ADDR=$(addr_of "$NETDEV")
echo "guest address $ADDR; $(java -version 2>&1 | head -1)"
# The JVM here runs on one vCPU (taskset): HotSpot patches compiled code while other threads
# run it, and QEMU's multi-threaded TCG does not keep that coherent across vCPUs. A pure-Java
# program (no RDMA, no native code of ours) crashed in 3 of 19 starts in this guest, at the entry
# of a C1-compiled method, and in 0 of 30 starts pinned to one vCPU. Real CPUs and KVM are not
# affected; no JVM flag is involved.
PIN="taskset -c 0"
CP="$S/nvmeof.jar:$S/test-classes:$S/junit/*"
rc=0
conformance() {   # NAME PROVIDER POLL JAVA-OPTIONS...   (POLL: busy-poll or events)
  local name=$1 provider=$2 poll=$3; shift 3
  if phase "conformance: $name" timeout -k 5 "$JAVA_TIMEOUT" $PIN java "$@" -cp "$CP" \
       io.nvmeof.fabric.rdma.ProviderConformanceMain "$provider" "$ADDR" "$PORT" "$poll"; then
    echo "CONFORMANCE PASS: $name"
  else
    echo "CONFORMANCE FAIL: $name"; rc=1
  fi
  if ls /tmp/hs_err_pid*.log 2>/dev/null; then
    echo "CONFORMANCE FAIL: $name: the JVM crashed"; rc=1
    head -40 /tmp/hs_err_pid*.log; mkdir -p /tmp/crashed && mv /tmp/hs_err_pid*.log /tmp/crashed/
  fi
}
cd /tmp
conformance "verbs, event mode" verbs events
conformance "verbs, busy polling" verbs busy-poll
if [ -f "$S/libdisni.so" ]; then
  conformance "disni" disni events --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Djava.library.path="$S"
else
  echo "conformance: disni SKIPPED (no libdisni.so in the share: set DISNI_SRC to a clone of DiSNI's sources)"
fi
exit $rc
