#!/usr/bin/env bash
# Hours of load, shortened: one target, many hosts, every block checked. A benchmark, not a test.
#
#   bench/soak.sh [MINUTES]     (default 10)
#   PROCESSES=4 HOSTS=2 CONTROLLERS=2 QUEUES=4 QD=128 NAMESPACE=ram:1G bench/soak.sh 10
#   SOAK_SECONDS=20 PROCESSES=2 HOSTS=1 QD=8 bench/soak.sh      (a quick look)
#
# Starts our target (the launcher, on loopback) with its limits set for the load, then PROCESSES
# host processes (io.nvmeof.tools.harness.Soak, in the CLI jar), each with HOSTS host NQNs of CONTROLLERS
# controllers of QUEUES I/O queues at QD commands in flight each: by default 8 host NQNs x 2
# controllers x 4 queues x QD128, 64 queues and 8,192 commands in flight. Mixed random 4 KiB
# reads and writes; each command slot owns its blocks and checks every read against what it last
# wrote. Every 10 s it samples the target's RSS (/proc) and direct memory (its metrics endpoint:
# the JVM's direct buffers and what Netty's buffer pool holds).
# Prints: I/Os, errors and corrupt blocks summed over the hosts (both must be 0), p50/p99/p99.9
# latency (the worst host), and RSS and direct memory over the first and the last minute.
set -euo pipefail
MINUTES=${1:-10}
PROCESSES=${PROCESSES:-4}
HOSTS=${HOSTS:-2}
CONTROLLERS=${CONTROLLERS:-2}
QUEUES=${QUEUES:-4}
QD=${QD:-128}
NAMESPACE=${NAMESPACE:-ram:1G}
TARGET_ARGS=${TARGET_ARGS:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
PORT=${PORT:-4420}
METRICS=${METRICS:-9748}
NQN=nqn.2026-11.io.nvmeof:soak
WORK=$(mktemp -d)
TARGET_PID=
HOST_PIDS=()
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/ours.sh"
cleanup() {
    for p in "${HOST_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    stop_our_target
    rm -rf "$WORK"
}
trap cleanup EXIT

queues_total=$((PROCESSES * HOSTS * CONTROLLERS * QUEUES))
# Limits for the load: a queue of QD+1 entries, QUEUES I/O queues per controller, CONTROLLERS per
# host, a connection per queue (admin queues too), and buffers for every command in flight.
our_target "$WORK/target.out" --listen "tcp://127.0.0.1:$PORT" --subsystem "$NQN" --namespace "$NAMESPACE" \
    --metrics "tcp://127.0.0.1:$METRICS" --max-queue-size $(( QD + 1 > 128 ? QD + 1 : 128 )) --max-io-queues "$QUEUES" \
    --max-controllers-per-host "$CONTROLLERS" --max-connections $((queues_total * 2 + 64)) \
    --max-buffer-memory $((queues_total * QD * 4096 * 2 + (64 << 20))) $TARGET_ARGS

sample() { # seconds since start -> "t rss_kib jvm_direct_bytes netty_pool_bytes"
    local rss m
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$TARGET_PID/status")
    m=$( (curl -s "http://127.0.0.1:$METRICS/metrics" || true) | awk '
        /^jvm_buffer_pool_used_bytes\{.*pool="direct"/ {d = $2}
        /^nvmeof_pooled_direct_memory_bytes/ {p = $2}
        END {printf "%.0f %.0f", d, p}')
    echo "$1 $rss $m"
}

SECONDS_RUN=${SOAK_SECONDS:-$((MINUTES * 60))}
echo "soak: $PROCESSES host processes x $HOSTS host NQNs x $CONTROLLERS controllers x $QUEUES queues x QD$QD" \
    "($queues_total I/O queues) against $NAMESPACE for $SECONDS_RUN s" >&2
for p in $(seq 0 $((PROCESSES - 1))); do
    java -cp "$JAR" io.nvmeof.tools.harness.Soak "nvme+tcp://127.0.0.1:$PORT/$NQN" "$p" "$HOSTS" "$CONTROLLERS" \
        "$QUEUES" "$QD" "$SECONDS_RUN" > "$WORK/host$p.out" 2>&1 &
    HOST_PIDS+=($!)
done
start=$(date +%s)
: > "$WORK/samples"
while true; do
    alive=0
    for p in "${HOST_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    kill -0 "$TARGET_PID" 2>/dev/null || { echo "THE TARGET DIED"; cat "$WORK/target.out"; exit 1; }
    sample $(($(date +%s) - start)) >> "$WORK/samples"
    sleep 10
done
status=0
for p in "${HOST_PIDS[@]}"; do wait "$p" || status=1; done
HOST_PIDS=()
kill -0 "$TARGET_PID" 2>/dev/null || { echo "THE TARGET DIED"; cat "$WORK/target.out"; exit 1; }

grep -h "^SOAK" "$WORK"/host*.out > "$WORK/results" || true
if [ "$(wc -l < "$WORK/results")" -ne "$PROCESSES" ]; then
    echo "a host process did not finish:"; for f in "$WORK"/host*.out; do tail -n 20 "$f"; done; exit 1
fi
grep -h "error at\|corrupt block" "$WORK"/host*.out | head -20 || true
verdict=0
python3 - "$WORK/results" "$WORK/samples" "$SECONDS_RUN" <<'EOF' || verdict=1
import sys
res = [dict(kv.split("=") for kv in line.split()[1:]) for line in open(sys.argv[1])]
ios = sum(int(r["ios"]) for r in res)
errors = sum(int(r["errors"]) for r in res)
corrupt = sum(int(r["corrupt"]) for r in res)
run = int(sys.argv[3])
samples = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
first = [s for s in samples if 60 <= s[0] < 120] or samples[:6]
last = [s for s in samples if s[0] >= samples[-1][0] - 60] if samples else []
def mean(xs, i):
    return sum(x[i] for x in xs) / len(xs) if xs else 0
print("| measure | value |")
print("|---|---|")
print("| I/Os (IOPS) | %d (%.0f) |" % (ios, ios / run))
print("| errors returned to the hosts | %d |" % errors)
print("| corrupt blocks | %d |" % corrupt)
for k, label in (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"), ("max_us", "max")):
    print("| latency %s (worst host) | %d us |" % (label, max(int(r[k]) for r in res)))
print("| target RSS, second minute -> last minute | %.0f -> %.0f MiB |" % (mean(first, 1) / 1024, mean(last, 1) / 1024))
print("| target direct memory (JVM's direct buffers + Netty's pool), second minute -> last minute | %.0f + %.0f -> %.0f + %.0f MiB |"
      % (mean(first, 2) / 2**20, mean(first, 3) / 2**20, mean(last, 2) / 2**20, mean(last, 3) / 2**20))
sys.exit(0 if errors == 0 and corrupt == 0 else 1)
EOF
exit $(( status || verdict ))
