#!/usr/bin/env bash
# A/B of two target builds on loopback, same client: 4 KiB randread at QD1 and QD32 on a RAM
# namespace, rounds alternating A and B (medians are what to compare: these machines are noisy).
#   bench/ab-targets.sh A.jar "A's target flags" B.jar "B's target flags" [ROUNDS]
# e.g. the cost of metrics: a jar from before them against this one with --metrics (scraped
# every second while it runs):
#   bench/ab-targets.sh /tmp/old/nvmeof.jar "" cli/build/nvmeof.jar "--metrics tcp://127.0.0.1:0"
# HOST_A / HOST_B: flags for the client's bench on each side, e.g. the polling modes end to end:
#   HOST_A="--busy-poll off" bench/ab-targets.sh J "--busy-poll off" J "" 6
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,10p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
client=$here/cli/build/nvmeof.jar
rounds=${5:-3}
work=$(mktemp -d)
tpid=
scraper=
stop() {
  [ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true
  [ -n "$tpid" ] && { kill "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true; }
  tpid= scraper=
}
trap 'stop; rm -rf "$work"' EXIT
NQN=nqn.2026-11.io.nvmeof:ab
for round in $(seq "$rounds"); do
  for side in A B; do
    if [ $side = A ]; then jar=$1 flags=$2 hflags=${HOST_A:-}; else jar=$3 flags=$4 hflags=${HOST_B:-}; fi
    # shellcheck disable=SC2086
    java -jar "$jar" target --listen tcp://127.0.0.1:0 --subsystem $NQN --namespace ram:256M $flags >"$work/t.out" 2>&1 &
    tpid=$!
    for _ in $(seq 300); do grep -q "port 1 " "$work/t.out" && break; sleep 0.1; done
    sleep 0.5
    port=$(sed -n 's/.*127.0.0.1:\([0-9]*\) port 1 .*/\1/p' "$work/t.out")
    url=$(grep -o "http://[^ ]*/metrics" "$work/t.out" || true)
    if [ -n "$url" ]; then (while true; do curl -s "$url" >/dev/null; sleep 1; done) & scraper=$!; fi
    for qd in 1 32; do
      iops=$(java -jar "$client" bench "nvme+tcp://127.0.0.1:$port/$NQN" --rw randread --bs 4k --iodepth $qd \
        --ramp_time 2 --runtime 5 -o json $hflags | python3 -c "import json,sys; print(round(json.load(sys.stdin)['jobs'][0]['read']['iops']))")
      echo "round $round $side qd$qd $iops"
    done
    stop
  done
done | tee "$work/all.log"
python3 - "$work/all.log" <<'PY'
import re, statistics, sys
d = {}
for l in open(sys.argv[1]):
    m = re.match(r'round \d+ (\w) (qd\d+) (\d+)', l)
    if m:
        d.setdefault((m[1], m[2]), []).append(int(m[3]))
for qd in ('qd1', 'qd32'):
    a, b = statistics.median(d[('A', qd)]), statistics.median(d[('B', qd)])
    print(f"{qd}: A median {a:.0f} IOPS, B median {b:.0f} IOPS, B/A {b / a:.3f}")
PY
