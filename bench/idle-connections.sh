#!/usr/bin/env bash
# What an idle connection costs the target: a benchmark, not a test.
#
#   bench/idle-connections.sh [CONNECTIONS]     (default 1000)
#
# Starts our target (the launcher, on loopback, a RAM namespace), lets it settle, samples its RSS
# (/proc) and direct memory (its metrics endpoint: the JVM's direct buffers and Netty's pool),
# then opens CONNECTIONS connections from one host process (io.nvmeof.tools.harness.IdleConnections,
# in the CLI jar: half as many controllers, an admin and an I/O queue each, each its own host NQN),
# waits for them to settle idle (keep-alive only), samples again and prints the growth per
# connection. Goal of issue 31: at most 1 MiB per connection.
set -euo pipefail
CONNECTIONS=${1:-1000}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
PORT=${PORT:-4420}
METRICS=${METRICS:-9748}
SETTLE=${SETTLE:-20}
NQN=nqn.2026-11.io.nvmeof:idle
WORK=$(mktemp -d)
TARGET_PID=
HOST_PID=
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/ours.sh"
cleanup() {
    [ -z "$HOST_PID" ] || kill "$HOST_PID" 2>/dev/null || true
    stop_our_target
    rm -rf "$WORK"
}
trap cleanup EXIT

our_target "$WORK/target.out" --listen "tcp://127.0.0.1:$PORT" --subsystem "$NQN" --namespace ram:64M \
    --metrics "tcp://127.0.0.1:$METRICS" --max-connections $((CONNECTIONS + 64))

sample() { # "rss_bytes direct_bytes"
    local rss
    rss=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$TARGET_PID/status")
    (curl -s "http://127.0.0.1:$METRICS/metrics" || true) | awk -v rss="$rss" '
        /^jvm_buffer_pool_used_bytes\{.*pool="direct"/ {d = $2}
        /^nvmeof_pooled_direct_memory_bytes/ {p = $2}
        END {printf "%.0f %.0f\n", rss, d + p}'
}

sleep "$SETTLE"
read -r rss0 direct0 < <(sample)
java -cp "$JAR" io.nvmeof.tools.harness.IdleConnections "nvme+tcp://127.0.0.1:$PORT/$NQN" $((CONNECTIONS / 2)) 3600 \
    > "$WORK/host.out" 2>&1 &
HOST_PID=$!
for _ in $(seq 1200); do
    grep -q "^CONNECTED" "$WORK/host.out" && break
    kill -0 "$HOST_PID" 2>/dev/null || { echo "the host failed:"; tail -n 20 "$WORK/host.out"; exit 1; }
    sleep 0.5
done
grep -q "^CONNECTED" "$WORK/host.out" || { echo "the host did not connect in 10 minutes"; exit 1; }
sleep "$SETTLE"
read -r rss1 direct1 < <(sample)
conns=$(curl -s "http://127.0.0.1:$METRICS/metrics" | awk '/^nvmeof_connections / {printf "%.0f", $2}')
python3 - "$rss0" "$direct0" "$rss1" "$direct1" "${conns:-0}" <<'EOF'
import sys
rss0, d0, rss1, d1, n = (float(x) for x in sys.argv[1:])
mib = 2 ** 20
print("| measure | before | with %d idle connections | per connection |" % n)
print("|---|---|---|---|")
print("| target RSS | %.0f MiB | %.0f MiB | %.1f KiB |" % (rss0 / mib, rss1 / mib, (rss1 - rss0) / n / 1024))
print("| target direct memory | %.1f MiB | %.1f MiB | %.1f KiB |" % (d0 / mib, d1 / mib, (d1 - d0) / n / 1024))
per = ((rss1 - rss0) + (d1 - d0)) / n
print("| (RSS + direct memory) growth per connection | | | %.1f KiB (goal <= 1024 KiB) |" % (per / 1024))
sys.exit(0 if per <= mib else 1)
EOF
