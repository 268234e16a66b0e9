#!/usr/bin/env bash
# nvmeof nbd with the Linux kernel's NBD client: two gateways (our target processes) serve one
# file-backed namespace (direct I/O, one UUID, ANA optimized on A), `nvmeof nbd` bridges both paths
# to an NBD export on a TCP port here, and a Debian trixie guest (its kernel has nbd) attaches it
# with nbd-client, makes an XFS filesystem, runs fio with verify on it while gateway A is killed
# and started again, then unmounts and checks the filesystem with xfs_repair -n. Needs root, the
# built jar and QEMU; the guest image (trixie with nbd-client and xfsprogs) is built on first use
# into $NVMF_VM_CACHE_NBD (default /var/tmp/nvmf-vm-trixie-nbd).
# Usage: bash test/kernel/run-nbd-interop.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "nbd interop: build first (mvn -DskipTests package)" >&2; exit 1; }
export NVMF_VM_CACHE=${NVMF_VM_CACHE_NBD:-/var/tmp/nvmf-vm-trixie-nbd}
if [ ! -x "$NVMF_VM_CACHE/rootfs/usr/sbin/nbd-client" ] || [ ! -f "$NVMF_VM_CACHE/rootfs.ext4" ]; then
  echo "== building the trixie guest image with nbd-client and xfsprogs in $NVMF_VM_CACHE"
  NVMF_VM_EXTRA_PKGS="nbd-client xfsprogs" "$vm/build-guest.sh" --suite trixie
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NQN=nqn.2026-12.io.nvmeof:nbd-interop
PA=$(free_port) PB=$(free_port) PN=$(free_port)
truncate -s 512M "$work/volume.img"
status=0
fail() { echo "FAILED: $*"; status=1; }
gateway_config() { # SELF_PORT STATE CNTLID_MIN CNTLID_MAX
  cat <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $1, "subsystems": ["$NQN"],
            "ana_groups": [{"grpid": 1, "ana": {"state": "$2"}}]}],
 "subsystems": [{"nqn": "$NQN", "serial": "NBD0001", "gateways": true, "cntlid_min": $3, "cntlid_max": $4,
                 "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/volume.img", "direct_io": true,
                                 "uuid": "0c4f7a52-9d3e-4b61-8a2f-5e7d9c1b3a40", "ana_grpid": 1}]}]}
JSON
}
gateway_config "$PA" optimized 1 999 >"$work/a.json"
gateway_config "$PB" non-optimized 1000 1999 >"$work/b.json"
. "$top/test/kernel/gateways.sh"
gw_listen[A]=127.0.0.1:$PA gw_listen[B]=127.0.0.1:$PB
start_gateway A
start_gateway B
java -Dio.netty.leakDetection.level=paranoid -jar "$jar" nbd "nvme+tcp://127.0.0.1:$PA,127.0.0.1:$PB/$NQN" \
  --listen "127.0.0.1:$PN" --export-name vol --ctrl-loss-tmo 120 >"$work/nbd.out" 2>"$work/nbd.err" &
npid=$!
pids+=($npid)
for _ in $(seq 300); do grep -q "nbd: serving" "$work/nbd.out" 2>/dev/null && break; sleep 0.1; done
grep -q "nbd: serving" "$work/nbd.out" || { echo "nvmeof nbd did not start: $(cat "$work/nbd.err")"; exit 1; }
echo "== gateways A :$PA (optimized) and B :$PB, one file; $(cat "$work/nbd.out")"

cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-nbd-client.sh" "$work/"
job=$work/job
"$vm/run-guest.sh" --timeout 1500 --mem 1024 --job "$job" --gfwd "10.0.2.100:10809=$PN" \
  --env NBD_HOST=10.0.2.100 --env NBD_EXPORT=vol --env RUNTIME="${NBD_RUNTIME:-60}" \
  "$work/guest-nbd-client.sh" >"$work/guest.out" 2>&1 &
guest=$!
# under the load: gateway A killed, then started again; the bridge's multipath carries on through B
for _ in $(seq 6000); do
  grep -q "^LOAD-RUNNING" "$job/out.log" 2>/dev/null && break
  kill -0 "$guest" 2>/dev/null || break
  sleep 0.2
done
if grep -q "^LOAD-RUNNING" "$job/out.log" 2>/dev/null; then
  sleep 8
  echo "== killing gateway A under the mounted filesystem's load"
  kill_gateway A
  sleep 10
  echo "== starting gateway A again"
  start_gateway A
else
  fail "the guest did not start its load"
fi
wait "$guest" || fail "the guest's part failed (exit $?)"
cat "$job/out.log"
kill -TERM $npid; wait $npid || fail "nvmeof nbd did not stop cleanly"
grep -q "nbd: stopped after" "$work/nbd.out" || fail "nvmeof nbd did not say it stopped"
if grep -q "LEAK:" "$work/nbd.err"; then fail "nvmeof nbd leaked buffers"; fi
stop_gateways
[ $status = 0 ] && echo "NBD INTEROP: PASS" || { echo "NBD INTEROP: FAIL"; tail -20 "$work/nbd.err"; }
exit $status
