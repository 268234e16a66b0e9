#!/usr/bin/env bash
# Does a short run measure the fabric or the JIT? (issue 55) A benchmark, not a test.
#
#   bench/short-runs.sh [ROUNDS]     (default 3)
#
# Host side: our target (the launcher, a 1 GiB RAM namespace, started fresh) and `nvmeof bench`
# randread 4 KiB QD32 with its defaults: ROUNDS runs of --runtime 5, one of --runtime 60, and one
# --runtime 5 --ramp_time 0 (measuring from the first I/O, as before the automatic warm-up); each
# with its IOPS, the warm-up it took and its first seconds (--write_iops_log). Goal: the 5 s figure
# within 10% of the 60 s one, its first second within 25%.
# Target side, where SPDK is built (SPDK, default /var/tmp/spdk): a fresh target of ours, then ten
# 1 s runs of spdk_nvme_perf in a row, the first ones meeting a cold target.
set -euo pipefail
ROUNDS=${1:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
export NVMEOF_JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
NVMEOF=$HERE/packaging/src/bin/nvmeof
PORT=${PORT:-4420}
NQN=nqn.2026-12.io.nvmeof:short-runs
U=nvme+tcp://127.0.0.1:$PORT/$NQN
SPDK=${SPDK:-/var/tmp/spdk}
WORK=$(mktemp -d)
TARGET_PID=
[ -f "$NVMEOF_JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
cleanup() {
    if [ -n "$TARGET_PID" ]; then kill "$TARGET_PID" 2>/dev/null || true; wait "$TARGET_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
start_target() {
    if [ -n "$TARGET_PID" ]; then kill "$TARGET_PID"; wait "$TARGET_PID" 2>/dev/null || true; fi
    "$NVMEOF" target --listen "tcp://127.0.0.1:$PORT" --subsystem "$NQN" --namespace ram:1G > "$WORK/target.out" 2>&1 &
    TARGET_PID=$!
    for _ in $(seq 300); do grep -q "listening on" "$WORK/target.out" && return 0; sleep 0.1; done
    echo "the target did not start:"; cat "$WORK/target.out"; exit 1
}
run() { # LABEL BENCH-ARGS...
    local label=$1
    shift
    rm -f "$WORK"/s_iops.1.log
    "$NVMEOF" bench "$U" --rw randread --bs 4k --iodepth 32 "$@" --write_iops_log="$WORK/s" --log_avg_msec=1000 \
        -o json > "$WORK/b.json"
    python3 - "$label" "$WORK/b.json" "$WORK/s_iops.1.log" <<'PY'
import json, sys
job = json.load(open(sys.argv[2]))["jobs"][0]
secs = [int(l.split(",")[1]) for l in open(sys.argv[3])]
print("%-18s IOPS %8.0f  warm-up %5s s  first seconds: %s" % (sys.argv[1], job["read"]["iops"],
      job["job options"].get("ramp_time", "0"), " ".join("%dk" % round(x / 1000) for x in secs[:6])))
PY
}

echo "== host side: nvmeof bench against a fresh target of ours"
start_target
runs=()
for r in $(seq "$ROUNDS"); do runs+=("5s:--runtime 5"); done
runs+=("60s:--runtime 60" "5s, no warm-up:--runtime 5 --ramp_time 0")
for spec in "${runs[@]}"; do
    # shellcheck disable=SC2086
    run "${spec%%:*}" ${spec#*:}
done | tee "$WORK/host.txt"
python3 - "$WORK/host.txt" <<'PY'
import re, statistics, sys
rows = [l for l in open(sys.argv[1])]
iops = lambda label: [float(re.search(r"IOPS +(\d+)", l).group(1)) for l in rows if l.startswith(label + " ")]
first = [float(re.search(r"first seconds: (\d+)k", l).group(1)) * 1000 for l in rows if l.startswith("5s ")]
five, sixty = statistics.median(iops("5s")), iops("60s")[0]
print("5 s runs: median %.0f IOPS, %.2f of the 60 s run (goal >= 0.90); their first seconds %.2f of it (goal >= 0.75)"
      % (five, five / sixty, statistics.median(first) / sixty))
PY

if [ -x "$SPDK/build/bin/spdk_nvme_perf" ]; then
    export LD_LIBRARY_PATH=$SPDK/build/lib:$SPDK/dpdk/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "== target side: ten 1 s runs of spdk_nvme_perf (QD32 4 KiB randread) on a fresh target of ours"
    start_target
    line=""
    for _ in $(seq 10); do
        v=$("$SPDK/build/bin/spdk_nvme_perf" --no-huge -s 512 -q 32 -o 4096 -w randread -t 1 \
            -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN" 2>&1 | awk '/^Total/ {printf "%.0fk", $3 / 1000}')
        line="$line ${v:-?}"
    done
    echo "spdk_nvme_perf, 1 s each:$line"
else
    echo "== target side skipped: SPDK is not built in $SPDK (bench/spdk/build-spdk.sh)"
fi
