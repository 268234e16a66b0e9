#!/usr/bin/env bash
# Kernel interop suite: Debian's kernel in a QEMU guest (the scripts in test/vm)
# runs the Linux NVMe/TCP host against our target running here. Needs root, the built
# jar (mvn package) and the guest image (built here on first use, about 1.5 min).
set -euo pipefail
# PARTS: which parts to run (default: all, 1 to 17). CI runs a selection that touches each peer
# once (.ci/run: PARTS="1 3 6 12" RDMA_ROUNDS=2); the rest are this script with PARTS unset, or a part's own script.
PARTS=${PARTS:-"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"}
want() { [[ " $PARTS " == *" $1 "* ]]; }
skipped() { echo "== part $1 not run (PARTS=\"$PARTS\")"; }
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "kernel interop: build first (mvn -DskipTests package)" >&2; exit 1; }
cache=${NVMF_VM_CACHE:-/var/tmp/nvmf-vm}
if [ ! -f "$cache/rootfs.ext4" ] || [ ! -f "$cache/vmlinuz" ] || ! ls -d "$cache"/rootfs/usr/lib/jvm/java-*/ >/dev/null 2>&1; then
  echo "== building the guest image (with a JRE: the NVMe/RDMA part runs our jar inside the guest)"
  "$vm/build-guest.sh" --java
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

NQN=nqn.2026-11.io.nvmeof:kernel-interop
NQN_LOCKED=nqn.2026-11.io.nvmeof:kernel-locked
SIZE=$((512 << 20))
SIZE2=$((16 << 20))

# config NAMESPACES: our JSON config; port 1 serves both subsystems, port 2 is discovery only
config() {
  cat <<JSON
{"ports": [
   {"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["$NQN", "$NQN_LOCKED"]},
   {"portid": 2, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": []}],
 "subsystems": [
   {"nqn": "$NQN", "namespaces": [$1]},
   {"nqn": "$NQN_LOCKED", "allowed_hosts": ["nqn.2026-11.io.nvmeof:not-the-guest"],
    "namespaces": [{"nsid": 1, "backend": "ram", "size": "16M"}]}]}
JSON
}
NS1="{\"nsid\": 1, \"backend\": \"file\", \"path\": \"$work/disk.img\", \"size\": $SIZE}"
NS2="{\"nsid\": 2, \"backend\": \"ram\", \"size\": $SIZE2}"
status=0
if want 1; then
config "$NS1" >"$work/target.json"

java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/target.json" \
  >"$work/target.out" 2>"$work/target.err" &
tpid=$!
pids+=($tpid)
for _ in $(seq 200); do
  grep -q "port 2" "$work/target.out" 2>/dev/null && break
  sleep 0.1
done
port=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\) port 1 .*/\1/p' "$work/target.out")
dport=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\) port 2 .*/\1/p' "$work/target.out")
[ -n "$port" ] && [ -n "$dport" ] || { echo "target did not start: $(cat "$work/target.err")"; exit 1; }
echo "== target on 127.0.0.1:$port, discovery on :$dport; booting the guest"

# When the guest says so, add namespace 2 to the config and reload it (SIGHUP), as
# `systemctl reload` would, while the kernel host stays connected.
(
  for _ in $(seq 3000); do
    if grep -q READY-FOR-RELOAD "$work/job/out.log" 2>/dev/null; then
      config "$NS1, $NS2" >"$work/target.json"
      kill -HUP "$tpid"
      exit 0
    fi
    sleep 0.2
  done
) &
watcher=$!

# lib.sh must sit next to the guest script
cp "$vm/guest-scripts/lib.sh" "$work/lib.sh"
cp "$top/test/kernel/guest-linux-host.sh" "$work/"
"$vm/run-guest.sh" --timeout 600 --job "$work/job" \
  --gfwd "10.0.2.100:4420=$port" --gfwd "10.0.2.101:8009=$dport" \
  --env TADDR=10.0.2.100 --env DADDR=10.0.2.101 --env NQN="$NQN" --env NQN_LOCKED="$NQN_LOCKED" \
  --env SIZE="$SIZE" --env SIZE2="$SIZE2" "$work/guest-linux-host.sh" || status=$?
kill "$watcher" 2>/dev/null || true

cleanup
pids=()
if grep -q "LEAK:" "$work/target.err"; then echo "target leaked buffers:"; cat "$work/target.err"; status=1; fi
grep -q "nvmeof target stopped" "$work/target.out" || { echo "target did not stop cleanly"; status=1; }
grep -q "refused Connect\|not allowed" "$work/target.err" || { echo "target did not log the refusal"; status=1; }
grep -q "namespace 2 added" "$work/target.out" || { echo "target did not reload"; status=1; }
else skipped 1; fi
# ---- part 2: our initiator against the kernel's nvmet-tcp target in the guest ----
if want 2; then
KNQN=nqn.2026-11.io.nvmeof:kernel-target
kport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "== kernel target in the guest, reached at 127.0.0.1:$kport"
kstatus=0
kjob=$("$vm/run-guest.sh" --bg --timeout 600 --job "$work/kjob" --fwd "tcp:127.0.0.1:$kport-:4420" \
  --env TRANSPORTS=tcp --env NQN="$KNQN" --env BACKING=file --env SIZE_MB=256 "$vm/guest-scripts/nvmet-target.sh") \
  || kstatus=1
if [ $kstatus = 0 ]; then
  for _ in $(seq 60); do python3 "$vm/tools/nvme-tcp-icreq.py" "$kport" >/dev/null 2>&1 && break; sleep 1; done
  # inside the reactor (-am, compiled up to test-compile): nothing has to be installed in ~/.m2
  (cd "$top" && mvn -B -o -q -pl test -am test-compile surefire:test -Dtest=KernelTargetInteropTest \
     -Dsurefire.failIfNoSpecifiedTests=false -Dnvmeof.kernel.target="127.0.0.1:$kport" -Dnvmeof.kernel.nqn="$KNQN") \
     || kstatus=1
  out="$top/test/build/surefire-reports/io.nvmeof.e2e.KernelTargetInteropTest.txt"
  cat "$out" 2>/dev/null || true
  grep -h "kernel target interop\|kernel target:" "$top/test/build/surefire-reports/io.nvmeof.e2e.KernelTargetInteropTest-output.txt" 2>/dev/null || true
  grep -q "Tests run: 1, Failures: 0, Errors: 0, Skipped: 0" "$out" 2>/dev/null || kstatus=1
  "$vm/run-guest.sh" --stop "$kjob" >/dev/null 2>&1 || true
fi
[ $kstatus = 0 ] && echo "KERNEL TARGET INTEROP: PASS" || { echo "KERNEL TARGET INTEROP: FAIL"; status=1; }
else skipped 2; fi

# ---- part 3: NVMe/RDMA on real verbs (soft-RoCE), all inside one guest: our target on the
# verbs provider with the kernel's nvme-rdma host (a file namespace, then ROUNDS rounds of a RAM
# namespace with the target started as users start it; RDMA_ROUNDS, default 5: each is about 100 s
# under emulation), then our initiator against nvmet-rdma ----
if want 3; then
mkdir -p "$work/share" "$work/rdma"
cp "$jar" "$work/share/"
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-rdma.sh" "$work/rdma/"
rstatus=0
"$vm/run-guest.sh" --timeout 1200 --mem 3072 --job "$work/rjob" --share "$work/share" --env ROUNDS="${RDMA_ROUNDS:-5}" \
  "$work/rdma/guest-rdma.sh" || rstatus=$?
[ $rstatus = 0 ] && echo "RDMA INTEROP (verbs over soft-RoCE): PASS" || { echo "RDMA INTEROP: FAIL ($rstatus)"; status=1; }
else skipped 3; fi

# ---- part 4: the RDMA provider conformance suite on real verbs (verbs in event and busy-poll
# mode; disni too where a clone of DiSNI's sources is at hand: DISNI_SRC names it, libdisni is built
# here and never committed) ----
if want 4; then
mkdir -p "$work/cshare/junit" "$work/conf"
cp "$jar" "$work/cshare/"
mkdir -p "$work/cshare/test-classes"       # the conformance suite (fabric) and its runner (rdma)
cp -r "$top/fabric/build/test-classes/." "$top/rdma/build/test-classes/." "$work/cshare/test-classes/"
# Maven's local repository: -Dmaven.repo.local in MAVEN_OPTS, else the JVM's user.home (which
# Maven uses; it is not always $HOME)
m2=$(printf '%s\n' ${MAVEN_OPTS:-} | sed -n 's/^-Dmaven.repo.local=//p' | tail -1)
if [ -z "$m2" ]; then
  m2="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *user.home = //p')/.m2/repository"
fi
# the JUnit API the test classes were compiled against (the version the pom pins)
jv=$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' "$top/pom.xml")
for j in "org/junit/jupiter/junit-jupiter-api/$jv/junit-jupiter-api-$jv.jar" \
         "org/junit/platform/junit-platform-commons/1.${jv#5.}/junit-platform-commons-1.${jv#5.}.jar"; do
  cp "$m2/$j" "$work/cshare/junit/" || { echo "missing $m2/$j (run mvn verify first)"; status=1; }
done
{ find "$m2/org/opentest4j/opentest4j" -name 'opentest4j-*.jar' ! -name '*sources*' 2>/dev/null || true; } | sort -V | tail -1 \
  | xargs -r -I{} cp {} "$work/cshare/junit/"
if [ -n "${DISNI_SRC:-}" ]; then
  if bash "$top/test/kernel/build-libdisni.sh" "$DISNI_SRC" "$work/disni" >"$work/disni.log" 2>&1; then
    cp "$work/disni/libdisni.so" "$work/cshare/"
  else
    echo "libdisni did not build from $DISNI_SRC (see below); the disni conformance run is skipped"; tail -5 "$work/disni.log"
  fi
else
  echo "DISNI_SRC is not set: libdisni is not built here and the disni conformance run is skipped"
fi
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-rdma-conformance.sh" "$work/conf/"
cstatus=0
"$vm/run-guest.sh" --timeout 900 --mem 2048 --job "$work/cjob" --share "$work/cshare" "$work/conf/guest-rdma-conformance.sh" \
  || cstatus=$?
[ $cstatus = 0 ] && echo "RDMA PROVIDER CONFORMANCE (real verbs): PASS" || { echo "RDMA PROVIDER CONFORMANCE: FAIL ($cstatus)"; status=1; }
else skipped 4; fi

# ---- part 5: SPDK's NVMe/RDMA host against our target, where SPDK has been built
# (bench/spdk/build-spdk.sh; SPDK_DIR, default /var/tmp/spdk) ----
if want 5; then
spdk=${SPDK_DIR:-/var/tmp/spdk}
if [ -x "$spdk/build/bin/spdk_nvme_perf" ] && [ -x "$spdk/build/bin/spdk_nvme_identify" ]; then
  scache=${NVMF_VM_CACHE_SPDK:-/var/tmp/nvmf-vm-spdk}
  if [ ! -f "$scache/rootfs.ext4" ] || ! ls -d "$scache"/rootfs/usr/lib/jvm/java-*/ >/dev/null 2>&1; then
    echo "== building the guest image with SPDK's runtime libraries in $scache"
    NVMF_VM_CACHE=$scache NVMF_VM_EXTRA_PKGS="libaio1 libbsd0 libfdt1 libnl-3-200 libnl-route-3-200 libnuma1 \
      librte-bus-pci23 librte-eal23 librte-ethdev23 librte-kvargs23 librte-mbuf23 librte-mempool-ring23 librte-mempool23 \
      librte-meter23 librte-net23 librte-pci23 librte-power23 librte-rcu23 librte-ring23 librte-telemetry23 librte-timer23 \
      libssl3 libuuid1" "$vm/build-guest.sh" --java
  fi
  mkdir -p "$work/sshare/bin" "$work/spdk"
  cp -a "$spdk/build/lib" "$work/sshare/lib"
  cp -a "$spdk"/isa-l/.libs/libisal.so* "$work/sshare/lib/"      # SPDK's binaries link ISA-L dynamically
  cp "$spdk/build/bin/spdk_nvme_perf" "$spdk/build/bin/spdk_nvme_identify" "$work/sshare/bin/"
  cp "$jar" "$work/sshare/"
  cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-spdk-rdma.sh" "$work/spdk/"
  sstatus=0
  NVMF_VM_CACHE=$scache "$vm/run-guest.sh" --timeout 900 --mem 3072 --job "$work/sjob" --share "$work/sshare" \
    --env ROUNDS=5 "$work/spdk/guest-spdk-rdma.sh" || sstatus=$?
  [ $sstatus = 0 ] && echo "SPDK NVMe/RDMA HOST INTEROP: PASS" || { echo "SPDK NVMe/RDMA HOST INTEROP: FAIL ($sstatus)"; status=1; }
else
  echo "SPDK NVMe/RDMA host interop SKIPPED: no SPDK build at $spdk (bench/spdk/build-spdk.sh builds one)"
fi
else skipped 5; fi

BLKTESTS_QUICK="nvme/003 nvme/004 nvme/005 nvme/006 nvme/008 nvme/014 nvme/018 nvme/019 nvme/021 nvme/023 nvme/029 nvme/031 nvme/041 nvme/061"

# ---- part 6: security with Linux 6.12 (a trixie guest): DH-HMAC-CHAP both ways ----
if want 6; then
if bash "$top/test/kernel/run-security-interop.sh"; then echo "SECURITY INTEROP (Linux 6.12): PASS"
else echo "SECURITY INTEROP (Linux 6.12): FAIL"; status=1; fi
else skipped 6; fi

# ---- part 7: the Debian package and its service under systemd as PID 1 (a guest of its own) ----
if want 7; then
if bash "$top/test/systemd/run-service-test.sh"; then echo "SYSTEMD SERVICE (package, notify, watchdog): PASS"
else echo "SYSTEMD SERVICE (package, notify, watchdog): FAIL"; status=1; fi
else skipped 7; fi

# ---- part 8: Linux's blktests (nvme group) against our target, where a clone of blktests is ----
# The whole group takes half an hour and more under emulation: it is its own step
# (`bash test/blktests/run-blktests.sh`); here a quick selection of it runs, covering discovery,
# keep-alive, UUIDs, reset, namespaces, flush, log pages, DSM, user I/O, fast deletion after
# setup (nvme/031's names) and DH-HMAC-CHAP.
if want 8; then
if BLKTESTS_TESTS=${BLKTESTS_TESTS:-"$BLKTESTS_QUICK"} bash "$top/test/blktests/run-blktests.sh"; then
  echo "BLKTESTS (quick selection): PASS or SKIPPED (see above)"
else echo "BLKTESTS (quick selection): FAIL"; status=1; fi
else skipped 8; fi

# ---- part 9: two gateways, one volume: our target twice over one file, Linux 6.12's native
# multipath through kills, a partition and ANA changes, under fio --verify ----
if want 9; then
if bash "$top/test/kernel/run-multipath-interop.sh"; then echo "MULTIPATH (two gateways, Linux 6.12): PASS"
else echo "MULTIPATH (two gateways, Linux 6.12): FAIL"; status=1; fi
else skipped 9; fi

# ---- part 10: reservations: Linux 6.12's nvme-cli and blkpr and our initiator as two hosts on our
# target (nvme/054's sequence, fencing, PTPL through a SIGKILL), SPDK's reserve program, and our
# initiator against nvmet's reservations (trixie-backports' kernel) ----
if want 10; then
if RESV_PARTS="1 2 3" bash "$top/test/kernel/run-reservations-interop.sh"; then echo "RESERVATIONS (Linux 6.12, blkpr, SPDK, nvmet): PASS"
else echo "RESERVATIONS (Linux 6.12, blkpr, SPDK, nvmet): FAIL"; status=1; fi
else skipped 10; fi

# ---- part 11: Copy (SPDK's simple_copy, Linux 6.12's nvme copy, our copy against nvmet), resize in
# place under Linux's fio, QoS with Linux at QD128 against the lowest limits ----
if want 11; then
if bash "$top/test/kernel/run-copy-interop.sh"; then echo "COPY, RESIZE, QOS (SPDK simple_copy, Linux 6.12, nvmet): PASS"
else echo "COPY, RESIZE, QOS (SPDK simple_copy, Linux 6.12, nvmet): FAIL"; status=1; fi
else skipped 11; fi

# ---- part 12: an RBD namespace on a one-node Ceph cluster: Linux 6.12's host writes it with fio,
# fio's rbd engine verifies every block from the image ----
if want 12; then
if bash "$top/test/kernel/run-rbd-interop.sh"; then echo "RBD (Linux 6.12, fio's rbd engine): PASS"
else echo "RBD (Linux 6.12, fio's rbd engine): FAIL"; status=1; fi
else skipped 12; fi

# ---- part 13: a gateway group over one RBD image on namespaced machines: Linux 6.12's native
# multipath through two gateways while each is killed, cut from the hosts, cut from Ceph and
# frozen past its lease ----
if want 13; then
if bash "$top/test/kernel/run-gateway-group-interop.sh"; then echo "GATEWAY GROUP (Linux 6.12 multipath, Ceph, namespaces): PASS"
else echo "GATEWAY GROUP (Linux 6.12 multipath, Ceph, namespaces): FAIL"; status=1; fi
else skipped 13; fi

# ---- part 14: reservations across the gateways of a gateway group over one RBD image: Linux
# 6.12 as two hosts, one through each gateway (nvme/054's sequence reported through both, a
# conflict, preempt-and-abort while the other host writes, a gateway killed, blkpr), SPDK's
# reserve through each gateway ----
if want 14; then
if RESV_PARTS=4 bash "$top/test/kernel/run-reservations-interop.sh"; then echo "RESERVATIONS ACROSS GATEWAYS (Linux 6.12, blkpr, SPDK, Ceph): PASS"
else echo "RESERVATIONS ACROSS GATEWAYS (Linux 6.12, blkpr, SPDK, Ceph): FAIL"; status=1; fi
else skipped 14; fi

# ---- part 15: nvmeof nbd with the kernel's NBD client: nbd-client attaches the bridge's export of
# a namespace two gateways serve, XFS on it, fio verifying while gateway A is killed and started
# again, xfs_repair -n clean ----
if want 15; then
if bash "$top/test/kernel/run-nbd-interop.sh"; then echo "NBD (Linux 6.12 nbd-client, XFS, a gateway killed): PASS"
else echo "NBD (Linux 6.12 nbd-client, XFS, a gateway killed): FAIL"; status=1; fi
else skipped 15; fi

# ---- part 16: scale: a discovery log of 256 entries read by nvme-cli (Linux 6.1) and our CLI; a
# subsystem of 1,024 namespaces connected by Linux's host (every namespace a block device) and ours ----
if want 16; then
if bash "$top/test/kernel/run-scale-interop.sh"; then echo "SCALE (256 subsystems, 1,024 namespaces; nvme-cli, Linux 6.1): PASS"
else echo "SCALE (256 subsystems, 1,024 namespaces; nvme-cli, Linux 6.1): FAIL"; status=1; fi
else skipped 16; fi
# ---- part 17: our central discovery controller (TP8010) with nvme-cli 2.13 and Linux 6.12 (discover
# and connect-all through it alone, DCTYPE, nvme dim's host registration and deregistration) and
# with nvme-stas 2.4.1 (stafd registers the host, stacd connects what the CDC lists) ----
if want 17; then
if bash "$top/test/kernel/run-cdc-interop.sh"; then echo "CDC (nvme-cli discover/connect-all/dim, nvme-stas, Linux 6.12): PASS"
else echo "CDC (nvme-cli discover/connect-all/dim, nvme-stas, Linux 6.12): FAIL"; status=1; fi
else skipped 17; fi

if [ $status = 0 ]; then echo "kernel interop: every part passed"; else echo "kernel interop: FAILED"; fi
exit $status

