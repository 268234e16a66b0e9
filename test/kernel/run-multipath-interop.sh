#!/usr/bin/env bash
# Two gateways, one volume, proven with Linux's native NVMe multipath (a Debian trixie guest,
# Linux 6.12). Two of our target processes (gateways A and B) serve one subsystem from one
# shared file opened with direct I/O: ANA group 1 is optimized on A and non-optimized on B,
# controller IDs 1-999 on A and 1000-1999 on B, each port refers to the other gateway. The
# guest (guest-multipath.sh) finds both through one discovery address (nvme connect-all follows
# the referral), connects a path to each and keeps fio writing and verifying through the
# multipath device while this script:
#   - SIGKILLs and restarts gateway A (the optimized path) and then B, ROUNDS times each;
#   - partitions A (the guest drops its traffic both ways; nothing is closed), then heals it;
#   - sets group 1 inaccessible on A (set_ana_state), then optimized again (nvmeof ana set).
# It measures, from each gateway's I/O counters (get_stats on its management socket, every
# 50 ms, from just before each event): how long until I/O runs on the other path, and how long
# until it is back on A, and holds them to the bounds below. Then the other direction: nvmet in a
# guest with two ports and ANA set through configfs, and our initiator's multipath (nvmeof bench
# --verify through both ports) through an ANA change to inaccessible and back. Needs root, the built jar and QEMU; the trixie image is built on
# first use into $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "multipath interop: build first (mvn -DskipTests package)" >&2; exit 1; }
. "$top/test/kernel/trixie.sh"
ROUNDS=${ROUNDS:-3}
KATO=5 RECONNECT=1
# bounds, in seconds: a kill resets the path's connections, so the host fails over at once and
# requeues what was in flight (KATO + RECONNECT is the budget); a partition is only noticed by the
# keep-alive (Linux sends one every KATO/2 and gives it KATO: up to 1.5 KATO, then the recovery,
# slow under emulation: 3 KATO); an ANA change is one notice and one log read; failback is one
# reconnect after the gateway listens again.
KILL_BOUND=$((KATO + RECONNECT)) PARTITION_BOUND=$((3 * KATO)) ANA_BOUND=1 BACK_BOUND=10

# on disk, not tmpfs: the shared file is opened with O_DIRECT
work=$(mktemp -d -p /var/tmp nvmeof-multipath.XXXXXX)
pids=()
cleanup() {
  for j in job kjob; do
    [ -s "$work/$j/qemu.pid" ] && kill -TERM "$(cat "$work/$j/qemu.pid")" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NQN=nqn.2026-11.io.nvmeof:gateways
PA=$(free_port) PB=$(free_port)
truncate -s 256M "$work/volume.img"
status=0
fail() { echo "FAILED: $*"; status=1; }

# gateway_config SELF_PORT OTHER_PORT GROUP1_STATE CNTLID_MIN CNTLID_MAX
gateway_config() {
  cat <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $1, "subsystems": ["$NQN"],
            "ana_groups": [{"grpid": 1, "ana": {"state": "$3"}}],
            "referrals": [{"name": "other-gateway", "trtype": "tcp", "adrfam": "ipv4",
                           "traddr": "127.0.0.1", "trsvcid": $2, "portid": 1}]}],
 "subsystems": [{"nqn": "$NQN", "serial": "GW0001", "gateways": true, "cntlid_min": $4, "cntlid_max": $5,
                 "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/volume.img", "direct_io": true,
                                 "uuid": "5b0d4f9e-2c1a-4e8b-9f3d-7a6c5e4b3a21", "ana_grpid": 1}]}]}
JSON
}
gateway_config "$PA" "$PB" optimized 1 999 >"$work/a.json"
gateway_config "$PB" "$PA" non-optimized 1000 1999 >"$work/b.json"

. "$top/test/kernel/gateways.sh"
gw_listen[A]=127.0.0.1:$PA gw_listen[B]=127.0.0.1:$PB

PARTS=${MULTIPATH_PARTS:-gateways nvmet}
if [[ " $PARTS " == *" gateways "* ]]; then
start_gateway A; start_gateway B
echo "== gateway A on 127.0.0.1:$PA (group 1 optimized), B on 127.0.0.1:$PB (non-optimized); one file, direct I/O"

cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-multipath.sh" "$work/"
job=$work/job
"$vm/run-guest.sh" --timeout 1500 --mem 2048 --job "$job" \
  --gfwd "10.0.2.100:4420=$PA" --gfwd "10.0.2.101:4420=$PB" \
  --env NQN="$NQN" --env PA="$PA" --env PB="$PB" --env KATO="$KATO" --env RECONNECT="$RECONNECT" \
  "$work/guest-multipath.sh" &
guest=$!
await_load
scenario() {
  local r t rc
  guest paths 60 A=live/optimized B=live/non-optimized || return 1
  measure "I/O on the optimized path (A)" A 30 0 "$(now)" || return 1
  idle B || return 1

  for r in $(seq "$ROUNDS"); do
    echo "== round $r: SIGKILL gateway A (optimized), then B"
    after "round $r: A killed, I/O on B" B $KILL_BOUND kill -KILL "${gpid[A]}" || return 1
    kill_gateway A
    guest paths 30 A=connecting B=live/non-optimized || return 1
    sleep 2
    start_gateway A || { fail "gateway A did not restart"; return 1; }
    measure "round $r: A back, I/O on A" A $BACK_BOUND 0 "$(now)" || return 1
    guest paths 30 A=live/optimized B=live/non-optimized || return 1
    idle B || return 1
    after "round $r: B killed, I/O goes on on A" A 1 kill -KILL "${gpid[B]}" || return 1
    kill_gateway B
    guest paths 30 A=live/optimized B=connecting || return 1
    start_gateway B || { fail "gateway B did not restart"; return 1; }
    guest paths 30 A=live/optimized B=live/non-optimized || return 1
  done

  echo "== a partition of A's path (the guest drops its traffic)"
  guest_send partition A
  after "A partitioned, I/O on B" B $PARTITION_BOUND mv "$job/.cmd" "$job/cmd.$n" || return 1
  guest_ack || return 1
  guest paths 60 A=connecting B=live/non-optimized || return 1
  for _ in $(seq 100); do [ "$(io "$(sock A)" expiries)" -ge 1 ] && break; sleep 0.2; done
  e=$(io "$(sock A)" expiries)
  [ "$e" -ge 1 ] && echo "   gateway A saw the keep-alive expire ($e) and dropped the controller" \
    || { fail "gateway A saw no keep-alive expiry"; return 1; }
  guest_send heal A
  after "A healed, I/O back on A" A $BACK_BOUND mv "$job/.cmd" "$job/cmd.$n" || return 1
  guest_ack || return 1
  guest paths 60 A=live/optimized B=live/non-optimized || return 1
  idle B || return 1

  echo "== ANA: group 1 inaccessible on A (set_ana_state), then optimized again (nvmeof ana set)"
  t=$(io "$(sock B)" after-ana 120 "$(sock A)" 1 1 inaccessible) || rc=$?
  judge "A inaccessible, I/O on B" $ANA_BOUND "${rc:-0}" "$t" || return 1
  guest paths 10 A=live/inaccessible B=live/non-optimized || return 1
  java -jar "$jar" ana show --socket "$(sock A)"
  after "A optimized again (nvmeof ana set, its JVM's start included), I/O back on A" A $BACK_BOUND \
    java -jar "$jar" ana set --socket "$(sock A)" --port 1 --group 1 optimized || return 1
  guest paths 10 A=live/optimized B=live/non-optimized || return 1
  idle B || return 1
}
[ $status = 0 ] && { scenario || fail "the scenario stopped at its first failure"; }
guest finish || true
wait "$guest" || fail "the guest script failed (rc $?)"

stop_gateways
echo "== measured (kernel $(cat "$NVMF_VM_CACHE/kernel-version"), KATO $KATO s, reconnect delay $RECONNECT s):"
printf '   %s\n' "${results[@]}"
fi

# ---- the other direction: our initiator's multipath against nvmet (two ports, ANA by configfs) ----
if [[ " $PARTS " == *" nvmet "* ]]; then
KNQN=nqn.2026-11.io.nvmeof:nvmet-ana
ka=$(free_port) kb=$(free_port)
echo "== nvmet in the guest on two ports (group 1 optimized on 4420, non-optimized on 4421), reached at 127.0.0.1:$ka and :$kb"
cp "$top/test/kernel/guest-nvmet-ana.sh" "$work/"
if kjob=$("$vm/run-guest.sh" --bg --timeout 600 --job "$work/kjob" --fwd "tcp:127.0.0.1:$ka-:4420" \
      --fwd "tcp:127.0.0.1:$kb-:4421" --env NQN="$KNQN" "$work/guest-nvmet-ana.sh"); then
  for port in $ka $kb; do
    for _ in $(seq 60); do python3 "$vm/tools/nvme-tcp-icreq.py" "$port" >/dev/null 2>&1 && break; sleep 1; done
  done
  kuri="nvme+tcp://127.0.0.1:$ka,127.0.0.1:$kb/$KNQN"
  java -jar "$jar" list-subsys "$kuri" || fail "list-subsys against nvmet"
  java -Dio.netty.leakDetection.level=paranoid -jar "$jar" bench --rw randwrite --bs 4k --iodepth 8 --runtime 40 \
    --size 16M --verify crc32c --reconnect-delay 1 --connect-timeout 5 "$kuri" >"$work/kbench.out" 2>"$work/kbench.err" &
  bpid=$!
  n=0 job=$kjob guest=$bpid
  sleep 10
  guest ana 1 inaccessible || true
  sleep 12
  guest ana 1 optimized || true
  wait $bpid || fail "bench through nvmet's two ports failed (rc $?)"
  cat "$work/kbench.out"
  grep -q ", 0 bad" "$work/kbench.out" || fail "bench through nvmet: blocks did not verify"
  grep -q "LEAK:" "$work/kbench.err" && fail "the initiator leaked buffers"
  b_ios=$(sed -n 's/.*path1 .* ios=\([0-9]*\).*/\1/p' "$work/kbench.out")
  [ "${b_ios:-0}" -gt 0 ] && echo "   port 2 served while port 1 was inaccessible ($b_ios I/Os)" \
    || fail "no I/O went to nvmet's port 2 while port 1 was inaccessible"
  grep -q "path0 .* live optimized" "$work/kbench.out" && echo "   back on port 1, optimized" \
    || fail "the initiator did not return to port 1"
  "$vm/run-guest.sh" --stop "$kjob" >/dev/null 2>&1 || true
  grep -E "^port|^ACK" "$kjob/out.log" | sed 's/^/   nvmet: /'
else
  fail "nvmet did not start in the guest"
fi
fi

if [ $status = 0 ]; then rm -rf "$work"; else echo "kept $work"; fi
exit $status
