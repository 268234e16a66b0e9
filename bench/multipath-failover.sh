#!/usr/bin/env bash
# Failover and failback times of our initiator's multipath, measured as the kernel interop suite's
# part 9 measures the Linux host's: two gateway processes over one direct-I/O file (A optimized,
# B non-optimized), `nvmeof bench --verify` through both, and each gateway's I/O counters (its
# management socket, every 20 ms) timing, from just before each event, how long until I/O runs on
# the other path and how long until it is back on A. Events: ROUNDS SIGKILL/restarts of A, then an
# ANA change to inaccessible and back. Prints each time and the medians; exits non-zero if the
# bench reports an error or a bad block. Needs the built jar (mvn -DskipTests package).
#
#   bench/multipath-failover.sh [ROUNDS]      (default 3; KATO 5 s, reconnect delay 1 s)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "build first (mvn -DskipTests package)" >&2; exit 1; }
ROUNDS=${1:-3}
work=$(mktemp -d -p /var/tmp nvmeof-failover.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
io() { python3 "$top/test/kernel/gateway-io.py" "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NQN=nqn.2026-11.io.nvmeof:failover
PA=$(free_port) PB=$(free_port)
for g in a b; do
  if [ $g = a ]; then port=$PA state=optimized min=1; else port=$PB state=non-optimized min=1000; fi
  cat >"$work/$g.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $port, "subsystems": ["$NQN"],
            "ana_groups": [{"grpid": 1, "ana": {"state": "$state"}}]}],
 "subsystems": [{"nqn": "$NQN", "serial": "FO0001", "gateways": true, "cntlid_min": $min, "cntlid_max": $((min + 998)),
                 "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/volume.img", "size": "256M", "direct_io": true,
                                 "uuid": "0f3e2d1c-4b5a-4978-8695-a4b3c2d1e0f9"}]}]}
JSON
done
declare -A gpid
start() {  # start A|B and wait until it listens
  local lc port; lc=$(echo "$1" | tr AB ab); [ "$1" = A ] && port=$PA || port=$PB
  java -jar "$jar" target --config "$work/$lc.json" --rpc-socket "$work/$lc.sock" >"$work/$lc.out" 2>&1 &
  gpid[$1]=$!; pids+=(${gpid[$1]})
  for _ in $(seq 300); do grep -q "listening on tcp://127.0.0.1:$port" "$work/$lc.out" && [ -S "$work/$lc.sock" ] && return; sleep 0.05; done
  echo "gateway $1 did not start"; cat "$work/$lc.out"; exit 1
}
start A; start B
runtime=$((ROUNDS * 8 + 20))
java -jar "$jar" bench --rw randwrite --bs 4k --iodepth 8 --runtime "$runtime" --size 64M --verify crc32c \
  --reconnect-delay 1 "nvme+tcp://127.0.0.1:$PA,127.0.0.1:$PB/$NQN" >"$work/bench.out" 2>"$work/bench.err" &
bench=$!
sleep 3
declare -a over back
for r in $(seq "$ROUNDS"); do
  t=$(io "$work/b.sock" after 30 kill -KILL "${gpid[A]}"); wait "${gpid[A]}" 2>/dev/null || true
  over+=("$t"); echo "round $r: A killed, I/O on B after $t s"
  sleep 2
  start A
  t=$(io "$work/a.sock" wait-io 30 0 "$(date +%s.%N)"); back+=("$t"); echo "round $r: A back, I/O on A after $t s"
  sleep 2
done
t=$(io "$work/b.sock" after-ana 30 "$work/a.sock" 1 1 inaccessible); echo "A inaccessible: I/O on B after $t s"
ana_over=$t
sleep 2
t=$(io "$work/a.sock" after-ana 30 "$work/a.sock" 1 1 optimized); echo "A optimized again: I/O on A after $t s"
ana_back=$t
wait $bench || { cat "$work/bench.out" "$work/bench.err"; echo "the bench failed"; exit 1; }
cat "$work/bench.out"
grep -q ", 0 bad" "$work/bench.out" || { echo "blocks did not verify"; exit 1; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "median over $ROUNDS kills: failover $(median "${over[@]}") s, failback $(median "${back[@]}") s;" \
  "ANA inaccessible $ana_over s, back $ana_back s"
