#!/usr/bin/env bash
# Kernel interop suite: Debian's kernel in a QEMU guest (the team's ../shared/vm scripts)
# runs the Linux NVMe/TCP host against our target running here. Needs root, the built
# jar (mvn package) and the guest image (built here on first use, about 1.5 min).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# The team's VM scripts sit in shared/ beside the repository (CI clones next to it).
vm=${NVMF_VM_DIR:-}
if [ -z "$vm" ]; then
  for cand in "$top/../shared/vm" "$top/../../shared/vm" /work/shared/vm; do
    [ -x "$cand/run-guest.sh" ] && { vm=$(cd "$cand" && pwd); break; }
  done
fi
vm=${vm:-$top/../shared/vm}
jar=$top/cli/target/nvmeof.jar
[ -x "$vm/run-guest.sh" ] || { echo "kernel interop: $vm/run-guest.sh not found (set NVMF_VM_DIR)" >&2; exit 1; }
[ -f "$jar" ] || { echo "kernel interop: build first (mvn -DskipTests package)" >&2; exit 1; }
cache=${NVMF_VM_CACHE:-/var/tmp/nvmf-vm}
if [ ! -f "$cache/rootfs.ext4" ] || [ ! -f "$cache/vmlinuz" ]; then
  echo "== building the guest image"
  "$vm/build-guest.sh"
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

# start_target NAME ARGS...: runs `nvmeof target` on a free loopback port; sets PORT
start_target() {
  local name=$1; shift
  java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --listen tcp://127.0.0.1:0 "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 200); do
    PORT=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/$name.out")
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  echo "target $name did not start: $(cat "$work/$name.err")" >&2
  return 1
}
start_target main --subsystem "$NQN" --namespace "file:$work/disk.img,size=$SIZE"
port=$PORT
start_target locked --subsystem "$NQN_LOCKED" --namespace ram:16M --allow-host nqn.2026-11.io.nvmeof:not-the-guest
locked=$PORT
echo "== targets on 127.0.0.1:$port and :$locked; booting the guest"

# lib.sh must sit next to the guest script
cp "$vm/guest-scripts/lib.sh" "$work/lib.sh"
cp "$top/test/kernel/guest-linux-host.sh" "$work/"
status=0
"$vm/run-guest.sh" --timeout 600 --job "$work/job" \
  --gfwd "10.0.2.100:4420=$port" --gfwd "10.0.2.101:4420=$locked" \
  --env TADDR=10.0.2.100 --env TADDR_LOCKED=10.0.2.101 --env NQN="$NQN" --env NQN_LOCKED="$NQN_LOCKED" \
  --env SIZE="$SIZE" "$work/guest-linux-host.sh" || status=$?

cleanup
pids=()
for t in main locked; do
  if grep -q "LEAK:" "$work/$t.err"; then echo "target $t leaked buffers:"; cat "$work/$t.err"; status=1; fi
  grep -q "nvmeof target stopped" "$work/$t.out" || { echo "target $t did not stop cleanly"; status=1; }
done
grep -q "refused Connect\|not allowed" "$work/locked.err" || { echo "locked target did not log the refusal"; status=1; }
if [ $status = 0 ]; then echo "kernel interop: 1 passed, 0 failed"; else echo "kernel interop: 0 passed, 1 failed"; fi
exit $status
