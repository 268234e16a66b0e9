#!/usr/bin/env bash
# What polling costs when there is little to poll for: our target and our host, each busy-poll
# mode side by side (default: off, today's sleeping loops, against adaptive, the default), rounds
# interleaved, medians. A benchmark, not a test.
#   bench/poll-cost.sh [ROUNDS]          (default 3)
#   MODES="off adaptive always" IDLE=60 LIGHT=20 bench/poll-cost.sh 3
# idle:  a target (RAM namespace) and a host connected to it with two I/O queues doing nothing
#        (keep-alive only), IDLE seconds (default 60) from SETTLE seconds after the host connected
#        (default 20: the JIT's start-up work is not idle cost): each process's CPU, % of one core.
# light: nvmeof bench at 1,000 IOPS (4 KiB randread, QD1, --rate_iops) for LIGHT seconds after a
#        5 s ramp: each process's CPU over the measured part, and the mean latency.
# Target on core 0, host on core 1 (taskset); CPU is utime+stime from /proc/PID/stat.
set -euo pipefail
ROUNDS=${1:-3}
MODES=${MODES:-off adaptive}
IDLE=${IDLE:-60}
LIGHT=${LIGHT:-20}
SETTLE=${SETTLE:-20}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
NQN=nqn.2026-11.io.nvmeof:poll-cost
WORK=$(mktemp -d)
TPID= HPID=
stop() {
  for p in $HPID $TPID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  TPID= HPID=
}
trap 'stop; rm -rf "$WORK"' EXIT
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pct() { awk -v d="$1" -v s="$2" -v hz="$HZ" 'BEGIN { printf "%.2f", d / hz / s * 100 }'; }

start_target() { # mode
  taskset -c 0 java -jar "$JAR" target --listen tcp://127.0.0.1:0 --subsystem $NQN --namespace ram:256M \
    --busy-poll "$1" >"$WORK/t.out" 2>&1 &
  TPID=$!
  for _ in $(seq 300); do grep -q "port 1 " "$WORK/t.out" && break; sleep 0.1; done
  PORT=$(sed -n 's/.*127.0.0.1:\([0-9]*\) port 1 .*/\1/p' "$WORK/t.out")
  [ -n "$PORT" ] || { echo "our target did not start: $(cat "$WORK/t.out")"; exit 1; }
  URI="nvme+tcp://127.0.0.1:$PORT/$NQN"
}

for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    # idle
    start_target "$mode"
    taskset -c 1 java -cp "$JAR" io.nvmeof.tools.harness.IdleHost "$URI" $((SETTLE + IDLE + 5)) "$mode" >"$WORK/h.out" 2>&1 &
    HPID=$!
    for _ in $(seq 300); do grep -q "connected" "$WORK/h.out" && break; sleep 0.1; done
    sleep "$SETTLE"
    t0=$(ticks $TPID) h0=$(ticks $HPID)
    sleep "$IDLE"
    t1=$(ticks $TPID) h1=$(ticks $HPID)
    echo "round $round $mode idle target $(pct $((t1 - t0)) "$IDLE") host $(pct $((h1 - h0)) "$IDLE")"
    kill $HPID 2>/dev/null || true; wait $HPID 2>/dev/null || true; HPID=
    # light load
    taskset -c 1 java -jar "$JAR" bench "$URI" --rw randread --bs 4k --iodepth 1 --rate_iops 1000 \
      --ramp_time 5 --runtime $((LIGHT + 2)) --busy-poll "$mode" -o json >"$WORK/b.json" 2>/dev/null &
    HPID=$!
    sleep 6
    t0=$(ticks $TPID) h0=$(ticks $HPID)
    sleep "$LIGHT"
    t1=$(ticks $TPID) h1=$(ticks $HPID)
    wait $HPID; HPID=
    lat=$(python3 -c "import json; j = json.load(open('$WORK/b.json'))['jobs'][0]['read']; print('%.0f %.1f' % (j['iops'], j['lat_ns']['mean'] / 1000))")
    echo "round $round $mode light target $(pct $((t1 - t0)) "$LIGHT") host $(pct $((h1 - h0)) "$LIGHT") iops-lat $lat"
    stop
  done
done | tee "$WORK/all.log"
python3 - "$WORK/all.log" "$MODES" <<'PY'
import re, statistics, sys
d = {}
for l in open(sys.argv[1]):
    m = re.match(r'round \d+ (\S+) (idle|light) target ([\d.]+) host ([\d.]+)(?: iops-lat ([\d.]+) ([\d.]+))?', l)
    if m:
        for k, v in (("target", m[3]), ("host", m[4]), ("iops", m[5]), ("lat", m[6])):
            if v is not None:
                d.setdefault((m[1], m[2], k), []).append(float(v))
modes = sys.argv[2].split()
med = lambda *k: statistics.median(d[k])
print("\n| busy_poll | idle: target CPU | idle: host CPU | 1,000 IOPS QD1: target CPU | host CPU | IOPS | mean latency |")
print("|---|---|---|---|---|---|---|")
for mo in modes:
    print(f"| {mo} | {med(mo, 'idle', 'target'):.2f}% | {med(mo, 'idle', 'host'):.2f}% | {med(mo, 'light', 'target'):.2f}% "
          f"| {med(mo, 'light', 'host'):.2f}% | {med(mo, 'light', 'iops'):.0f} | {med(mo, 'light', 'lat'):.1f} us |")
if "off" in modes:
    for mo in modes:
        if mo != "off":
            print(f"{mo} / off at 1,000 IOPS: target CPU {med(mo, 'light', 'target') / med('off', 'light', 'target'):.2f}x, "
                  f"host CPU {med(mo, 'light', 'host') / med('off', 'light', 'host'):.2f}x")
PY
