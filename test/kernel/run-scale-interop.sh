#!/usr/bin/env bash
# Our target at scale with Linux's host and nvme-cli (Debian 12's 6.1 in a QEMU guest) and our
# initiator: 256 subsystems, so a discovery log of 256 entries (about 257 KiB, read in pieces by
# nvme-cli), one of them with 1,024 namespaces (a full Identify active-namespace list: the host asks
# again past the last one). nvme-cli's discover counts the entries, the kernel's host connects the
# big subsystem and every namespace must appear as a block device; our CLI's discover and list do
# the same from here. Needs root, the built jar and QEMU (the guest image is built on first use).
# Usage: bash test/kernel/run-scale-interop.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "scale interop: build first (mvn -DskipTests package)" >&2; exit 1; }
cache=${NVMF_VM_CACHE:-/var/tmp/nvmf-vm}
[ -f "$cache/rootfs.ext4" ] || "$vm/build-guest.sh"
work=$(mktemp -d)
tpid=
cleanup() {
  [ -z "$tpid" ] || { kill -TERM "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true; }
}
trap cleanup EXIT
SUBSYSTEMS=256
BIG_NS=1024
BIG=nqn.2026-12.io.nvmeof:scale-big
status=0
fail() { echo "FAILED: $*"; status=1; }

python3 - "$SUBSYSTEMS" "$BIG" "$BIG_NS" >"$work/target.json" <<'PY'
import json, sys
subsystems, big, big_ns = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
subs = [{"nqn": "nqn.2026-12.io.nvmeof:scale-%d" % i,
         "namespaces": [{"nsid": 1, "backend": "null", "size": "1G"}]} for i in range(subsystems - 1)]
subs.append({"nqn": big, "namespaces": [{"nsid": n, "backend": "null", "size": "1G"} for n in range(1, big_ns)]
             + [{"nsid": big_ns, "backend": "ram", "size": "16M"}]})
print(json.dumps({"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0,
                             "subsystems": [s["nqn"] for s in subs]}], "subsystems": subs}))
PY
java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/target.json" \
  >"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 300); do grep -q "listening on" "$work/target.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/target.out" | head -1)
[ -n "$port" ] || { echo "the target did not start: $(cat "$work/target.err")"; exit 1; }
echo "== our target on 127.0.0.1:$port: $SUBSYSTEMS subsystems, $BIG with $BIG_NS namespaces"

# our initiator
n=$(java -jar "$jar" discover "nvme+tcp://127.0.0.1:$port" | grep -c "subnqn: *nqn.2026-12.io.nvmeof:scale-" || true)
[ "$n" = "$SUBSYSTEMS" ] && echo "check: nvmeof discover read $n entries" || fail "nvmeof discover read $n entries"
n=$(java -jar "$jar" list "nvme+tcp://127.0.0.1:$port/$BIG" | grep -cE "^ *[0-9]+ " || true)
[ "$n" = "$BIG_NS" ] && echo "check: nvmeof list shows $n namespaces" || fail "nvmeof list shows $n namespaces"

# Linux's host and nvme-cli
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-scale.sh" "$work/"
"$vm/run-guest.sh" --timeout 1200 --mem 2048 --job "$work/job" --gfwd "10.0.2.100:4420=$port" \
  --env TADDR=10.0.2.100 --env SUBSYSTEMS="$SUBSYSTEMS" --env BIG="$BIG" --env BIG_NS="$BIG_NS" \
  "$work/guest-scale.sh" || fail "the guest's checks (exit $?)"

kill -TERM "$tpid"; wait "$tpid" || true; tpid=
grep -q "LEAK:" "$work/target.err" && fail "the target leaked buffers: $(grep -A3 LEAK: "$work/target.err" | head)"
grep -q "nvmeof target stopped" "$work/target.out" || fail "the target did not stop cleanly"
[ $status = 0 ] && echo "SCALE (nvme-cli, Linux 6.1, our initiator): PASS" || echo "SCALE: FAIL"
exit $status
