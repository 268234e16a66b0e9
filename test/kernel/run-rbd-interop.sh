#!/usr/bin/env bash
# RBD namespaces with Linux's NVMe/TCP host and Ceph's own tools: a one-node Ceph cluster here
# (test/ceph/ceph-cluster.sh), an image served by our target, the kernel host in a Debian trixie
# guest (guest-rbd-host.sh) writing it with fio's CRC32C headers, and fio's rbd engine here
# verifying every block from the image itself, as SPDK's and Ceph's gateways are checked. Needs
# root, the built jar, QEMU and Ceph's packages (ceph-mon ceph-osd ceph-common librbd1, and fio
# with its rbd engine, which Debian's has); the trixie image is built on first use into
# $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "rbd interop: build first (mvn -DskipTests package)" >&2; exit 1; }
for c in ceph-mon ceph-osd rbd fio; do
  command -v $c >/dev/null || { echo "rbd interop: $c is missing (apt-get install ceph-mon ceph-osd ceph-common fio)" >&2; exit 1; }
done
fio --enghelp 2>/dev/null | grep -qw rbd || { echo "rbd interop: this fio has no rbd engine" >&2; exit 1; }
. "$top/test/kernel/trixie.sh"
NQN=nqn.2026-11.io.nvmeof:rbd-interop
SIZE=$((32 << 20))
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$top/test/ceph/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true
}
trap cleanup EXIT
status=0

eval "$("$top/test/ceph/ceph-cluster.sh" start "$work/ceph")"
rbd create --size 64M rbd/vol
java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --listen tcp://127.0.0.1:0 --subsystem "$NQN" \
  --namespace "rbd:rbd/vol,conf=$CEPH_CONF" >"$work/target.out" 2>"$work/target.err" &
tpid=$!
pids+=($tpid)
for _ in $(seq 300); do grep -q "listening on tcp" "$work/target.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\) .*/\1/p' "$work/target.out")
[ -n "$port" ] || { echo "target did not start: $(cat "$work/target.err")"; exit 1; }
echo "== our target on 127.0.0.1:$port serves rbd/vol; booting the trixie guest"
cp "$vm/guest-scripts/lib.sh" "$work/lib.sh"
cp "$top/test/kernel/guest-rbd-host.sh" "$work/"
"$vm/run-guest.sh" --timeout 900 --job "$work/job" --gfwd "10.0.2.100:4420=$port" \
  --env TADDR=10.0.2.100 --env NQN="$NQN" --env SIZE="$SIZE" "$work/guest-rbd-host.sh" || status=$?
if [ $status = 0 ]; then
  # the same job, read from the image by fio's rbd engine (librbd), each block's header checked
  if fio --name=rbdcheck --ioengine=rbd --clientname=admin --pool=rbd --rbdname=vol --rw=write --bs=64k \
       --size="$SIZE" --verify=crc32c --verify_only --minimal >"$work/fio-rbd.out" 2>&1; then
    echo "check: fio's rbd engine verified every block the kernel host wrote ($SIZE bytes)"
  else
    echo "FAILED: fio's rbd engine found what the kernel host wrote wrong:"; cat "$work/fio-rbd.out"; status=1
  fi
fi
kill -TERM $tpid; wait $tpid || true
pids=()
if grep -q "LEAK:" "$work/target.err"; then echo "target leaked buffers:"; cat "$work/target.err"; status=1; fi
grep -q "nvmeof target stopped" "$work/target.out" || { echo "target did not stop cleanly"; status=1; }
[ $status = 0 ] && echo "RBD INTEROP: PASS" || echo "RBD INTEROP: FAIL"
exit $status
