#!/usr/bin/env bash
# Network faults on a single path under a verifying workload: a benchmark, not a test.
#
#   bench/faults.sh [SECONDS]     (default 40 per fault)
#   FAULTS="delay=5,2 reset=5" QUEUES=2 QD=32 bench/faults.sh 60
#
# Our target (the launcher, a RAM namespace) behind FaultProxy (io.nvmeof.tools.harness, in the CLI
# jar) on loopback; for each fault in turn, one host process (Soak, the same package: QUEUES I/O queues at QD, mixed random 4 KiB
# reads and writes, every block checked) runs through the proxy for SECONDS. The faults are
# what a TCP stream sees of a bad network (this machine's kernel has no netem): a delay with
# jitter, loss as the retransmission wait it costs, writes split into tiny pieces, connections
# reset, and the link down for 10 s. Prints, per fault, the I/Os, the errors returned to the
# application and the corrupt blocks (both must be 0), and the p99.9 and worst latency.
set -euo pipefail
SECONDS_RUN=${1:-40}
FAULTS=${FAULTS:-"none delay=5,2 loss=0.01,200 split=64 reset=5 down=10,10"}
QUEUES=${QUEUES:-2}
QD=${QD:-32}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
PORT=${PORT:-4420}
PROXY_PORT=${PROXY_PORT:-4421}
NQN=nqn.2026-11.io.nvmeof:faults
WORK=$(mktemp -d)
TARGET_PID=
PROXY_PID=
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/ours.sh"
cleanup() {
    [ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null || true
    stop_our_target
    rm -rf "$WORK"
}
trap cleanup EXIT

our_target "$WORK/target.out" --listen "tcp://127.0.0.1:$PORT" --subsystem "$NQN" --namespace ram:256M

echo "| fault | I/Os | errors returned | corrupt blocks | p99.9 | max |"
echo "|---|---|---|---|---|---|"
status=0
i=0
for fault in $FAULTS; do
    java -cp "$JAR" io.nvmeof.tools.harness.FaultProxy "$PROXY_PORT" "$PORT" $fault > "$WORK/proxy$i.out" 2>&1 &
    PROXY_PID=$!
    for _ in $(seq 100); do grep -q "^proxy" "$WORK/proxy$i.out" && break; sleep 0.1; done
    # each fault's run works on blocks of its own (the process index picks the region)
    java -cp "$JAR" io.nvmeof.tools.harness.Soak "nvme+tcp://127.0.0.1:$PROXY_PORT/$NQN" "$i" 1 1 "$QUEUES" "$QD" \
        "$SECONDS_RUN" > "$WORK/host$i.out" 2>&1 || true
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    PROXY_PID=
    kill -0 "$TARGET_PID" 2>/dev/null || { echo "THE TARGET DIED"; cat "$WORK/target.out"; exit 1; }
    line=$(grep "^SOAK" "$WORK/host$i.out" || true)
    if [ -z "$line" ]; then
        echo "| $fault | the host failed: $(grep -m1 -i "exception" "$WORK/host$i.out" || tail -n 1 "$WORK/host$i.out") | | | | |"
        status=1
    else
        python3 - "$fault" "$line" <<'EOF' || status=1
import sys
r = dict(kv.split("=") for kv in sys.argv[2].split()[1:])
print("| %s | %s | %s | %s | %.1f ms | %.1f ms |" % (sys.argv[1], r["ios"], r["errors"], r["corrupt"],
      int(r["p999_us"]) / 1000, int(r["max_us"]) / 1000))
sys.exit(0 if r["errors"] == "0" and r["corrupt"] == "0" else 1)
EOF
    fi
    grep -h "error at\|corrupt block" "$WORK/host$i.out" | head -3 | sed 's/^/    /' || true
    i=$((i + 1))
done
exit $status
