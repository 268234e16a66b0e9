#!/usr/bin/env bash
# Our central discovery controller (TP8010) with Linux's host and nvme-cli (Debian trixie's 6.12
# and nvme-cli 2.13 in a QEMU guest). One of our targets is the CDC (--cdc=true, a discovery port
# alone, the management API on a socket); two more register their subsystems with it
# (--cdc-address). The guest (guest-cdc.sh) knows only the CDC's address: nvme-cli's discover
# lists both subsystems, connect-all connects both, each namespace reads back what was written; a
# persistent discovery controller says DCTYPE 2, and nvme-cli's dim registers the guest as a host,
# which the CDC's get_cdc_registrations shows, and deregisters it. Then nvme-stas (the same script):
# stafd, given the CDC's address, registers the host and reads the log; stacd connects both
# subsystems. Our CLI's discover reads the same log from here. Needs root, the built jar and QEMU; the trixie image is built on first use.
# Usage: bash test/kernel/run-cdc-interop.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "cdc interop: build first (mvn -DskipTests package)" >&2; exit 1; }
. "$top/test/kernel/trixie.sh"
work=$(mktemp -d)
pids=()
cleanup() {
  [ -s "$work/job/qemu.pid" ] && kill -TERM "$(cat "$work/job/qemu.pid")" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
C=$(free_port) T1=$(free_port) T2=$(free_port)
NQN1=nqn.2026-12.io.nvmeof:cdc-vol1 NQN2=nqn.2026-12.io.nvmeof:cdc-vol2
status=0
fail() { echo "FAILED: $*"; status=1; }
java_() { java -Dio.netty.leakDetection.level=paranoid -jar "$jar" "$@"; }
# a target in the background: exec, so that $! is the JVM's PID and a signal reaches it
serve() { exec java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target "$@"; }

serve --discovery "tcp://127.0.0.1:$C" --cdc=true --rpc-socket "$work/cdc.sock" >"$work/cdc.out" 2>"$work/cdc.err" &
pids+=($!)
for _ in $(seq 300); do grep -q "management API on" "$work/cdc.out" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$work/cdc.out" || { echo "the CDC did not start: $(cat "$work/cdc.err")"; exit 1; }
i=1
for pair in "$NQN1:$T1" "$NQN2:$T2"; do
  serve --listen "tcp://127.0.0.1:${pair##*:}" --subsystem "${pair%:*}" --namespace ram:16M \
    --cdc-address "nvme+tcp://127.0.0.1:$C" >"$work/t$i.out" 2>"$work/t$i.err" &
  pids+=($!)
  i=$((i + 1))
done
for _ in $(seq 600); do
  [ "$(java_ discover "nvme+tcp://127.0.0.1:$C" 2>/dev/null | grep -cE "subnqn: *($NQN1|$NQN2)$")" = 2 ] && break
  sleep 0.2
done
n=$(java_ discover "nvme+tcp://127.0.0.1:$C" | grep -cE "subnqn: *($NQN1|$NQN2)$" || true)
[ "$n" = 2 ] && echo "check: nvmeof discover lists both registered subsystems through the CDC" \
  || { fail "the CDC lists $n of 2 subsystems"; cat "$work"/t*.out; exit 1; }
echo "== CDC on 127.0.0.1:$C; $NQN1 on :$T1 and $NQN2 on :$T2 registered there; booting the trixie guest"

registrations() { java_ rpc --socket "$work/cdc.sock" get_cdc_registrations; }
# PEERS: nvme-cli (and the kernel's host), stas (nvme-stas' stafd and stacd); a boot of the guest each
PEERS=${PEERS:-nvme-cli stas}
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-cdc.sh" "$work/"
for PEER in $PEERS; do
echo "== the guest: $([ "$PEER" = stas ] && echo "nvme-stas (stafd, stacd)" || echo "nvme-cli and Linux's host")"
job=$work/job-$PEER
"$vm/run-guest.sh" --timeout 900 --mem 2048 --job "$job" \
  --gfwd "10.0.2.100:4420=$C" --gfwd "10.0.2.101:4420=$T1" --gfwd "10.0.2.102:4420=$T2" \
  --env C="$C" --env T1="$T1" --env T2="$T2" --env NQN1="$NQN1" --env NQN2="$NQN2" --env PEER="$PEER" \
  "$work/guest-cdc.sh" >"$work/guest-$PEER.log" 2>&1 &
guest=$!
# the guest's steps: after its registration, the CDC must hold a host registration of its host
# NQN; after its deregistration (nvme-cli's), none
answered=0
while kill -0 "$guest" 2>/dev/null; do
  if [ $answered = 0 ] && grep -q "^STEP 1 registered" "$job/out.log" 2>/dev/null; then
    host=$(sed -n 's/^STEP 1 registered //p' "$job/out.log" | tr -d '\r' | head -1)
    r=$(registrations)
    echo "$r" | grep -q '"entity_type" : "host"' && { [ -z "$host" ] || echo "$r" | grep -q "\"entity_id\" : \"$host\""; } \
      && echo ok >"$job/.cmd" || echo "no host registration: $r" >"$job/.cmd"
    mv "$job/.cmd" "$job/cmd.1"; answered=1
    echo "== the CDC's registrations with the guest registered:"
    echo "$r" | grep -E '"(entity_type|entity_id|address)"' | sed 's/^ */   /'
  elif [ $answered = 1 ] && grep -q "^STEP 2 deregistered" "$job/out.log" 2>/dev/null; then
    r=$(registrations)
    echo "$r" | grep -q '"entity_type" : "host"' && echo "still there: $r" >"$job/.cmd" || echo ok >"$job/.cmd"
    mv "$job/.cmd" "$job/cmd.2"; answered=2
  fi
  sleep 0.2
done
wait "$guest" || { fail "the $PEER guest's checks (exit $?)"; tail -30 "$work/guest-$PEER.log"; }
grep -aE "^(check|FAILED|kernel)" "$job/out.log" | tr -d '\r' | sed 's/^/   guest: /'
done

for p in "${pids[@]}"; do kill -TERM "$p"; done
for p in "${pids[@]}"; do wait "$p" || true; done
pids=()
grep -q "deregistered from the central discovery controller" "$work/t1.out" || fail "target 1 did not deregister at shutdown"
for f in "$work"/*.err; do grep -q "LEAK:" "$f" && fail "$(basename "$f" .err) leaked buffers"; done
[ $status = 0 ] && echo "CDC ($PEERS; Linux 6.12; our initiator): PASS" || echo "CDC: FAIL"
exit $status
