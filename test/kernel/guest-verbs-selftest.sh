#!/bin/bash
# guest-verbs-selftest.sh - the `verbs` RDMA provider (rdma-core through jnr-ffi/jffi) against
# the kernel's soft-RoCE inside a QEMU guest: rxe0 on eth0, then VerbsSelfTest listens on the
# guest's eth0 address and connects to itself over rxe0 (private data, reject, SEND/RECV,
# RDMA WRITE + SEND, RDMA READ, 1000 round trips, wrong rkey, orderly close).
#
# Run from the host (SHARE: fabric's runtime jars + target/classes + target/test-classes):
#   mvn -o -q -pl fabric test-compile dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=SHARE
#   cp -r fabric/build/classes SHARE/classes; cp -r fabric/build/test-classes SHARE/test-classes
#   /work/shared/vm/run-guest.sh --share SHARE --timeout 600 test/kernel/guest-verbs-selftest.sh
# It runs the self-test twice: completion channels (event mode), then -Dnvmeof.rdma.busyPoll=true.
# Env: NETDEV (eth0), PORT (4420), JAVA_TIMEOUT (420 s), JAVA_OPTS.
set -eu
. /job/lib.sh
NETDEV=${NETDEV:-eth0} PORT=${PORT:-4420} JAVA_TIMEOUT=${JAVA_TIMEOUT:-420}

phase "rxe0 on $NETDEV" rxe_up "$NETDEV"
ADDR=$(addr_of "$NETDEV")
ls -l /dev/infiniband/
echo "guest address $ADDR; $(java -version 2>&1 | head -1)"
CP="/mnt/share/*:/mnt/share/classes:/mnt/share/test-classes"
phase "VerbsSelfTest on $ADDR:$PORT" timeout "$JAVA_TIMEOUT" java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  ${JAVA_OPTS:-} -cp "$CP" io.nvmeof.fabric.rdma.verbs.VerbsSelfTest "$ADDR" "$PORT"
phase "VerbsSelfTest, busy polling (-Dnvmeof.rdma.busyPoll=true)" timeout "$JAVA_TIMEOUT" java -Xmx256m -XX:+UseSerialGC \
  -XX:TieredStopAtLevel=1 -Dnvmeof.rdma.busyPoll=true ${JAVA_OPTS:-} -cp "$CP" io.nvmeof.fabric.rdma.verbs.VerbsSelfTest "$ADDR" "$PORT"
