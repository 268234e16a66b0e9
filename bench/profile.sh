#!/usr/bin/env bash
# Where the time goes: CPU (or allocation, lock) profile of our target or our host under load,
# with async-profiler, plus context switches and syscalls per I/O. A tool, not a test.
#
#   bench/profile.sh target [EVENT]   our target on core 0, spdk_nvme_perf on core 1 (randread QD32)
#   bench/profile.sh host [EVENT]     nvmeof bench on core 1 against SPDK's target on core 0
#
# EVENT is async-profiler's: cpu (default), alloc, lock, wall. Writes collapsed stacks to
# $OUT (default /tmp/nvmeof-profile) and prints the hottest frames (self and inclusive), the
# threads, context switches and read/write syscalls per I/O of the profiled process.
# async-profiler comes from Maven Central (tools.profiler:async-profiler) into ~/.m2; SPDK as
# for compare-spdk.sh. Knobs: QD, BS, RW, RUNTIME, OUR_TARGET_ARGS, OUR_HOST_ARGS, OUR_NAMESPACE, SPDK.
set -euo pipefail
SIDE=${1:?target or host}
EVENT=${2:-cpu}
QD=${QD:-32}; BS=${BS:-4096}; RW=${RW:-randread}; RUNTIME=${RUNTIME:-5}
OUR_TARGET_ARGS=${OUR_TARGET_ARGS:-}; OUR_HOST_ARGS=${OUR_HOST_ARGS:-}
OUR_NAMESPACE=${OUR_NAMESPACE:-ram:512M}   # e.g. file:/var/tmp/f,direct for a file namespace
SPDK=${SPDK:-/var/tmp/spdk}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
OUT=${OUT:-/tmp/nvmeof-profile}
# exact line attribution inside inlined code (a profiling aid; no change to what runs)
JVM_FLAGS=${JVM_FLAGS:--XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints}
AP_VERSION=4.1
PORT=4420
OUR_NQN=nqn.2026-11.io.nvmeof:bench
SPDK_NQN=nqn.2016-06.io.spdk:cnode1
mkdir -p "$OUT"

[ -x "$SPDK/build/bin/spdk_nvme_perf" ] || { echo "SPDK is not built in $SPDK: skipped"; exit 0; }
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/spdk.sh"
export LD_LIBRARY_PATH=$SPDK/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
APJAR=$HOME/.m2/repository/tools/profiler/async-profiler/$AP_VERSION/async-profiler-$AP_VERSION.jar
[ -f "$APJAR" ] || mvn -B -q dependency:get -Dartifact=tools.profiler:async-profiler:$AP_VERSION > /dev/null
(cd "$OUT" && unzip -o -q "$APJAR" linux-x64/libasyncProfiler.so)
AP=$OUT/linux-x64/libasyncProfiler.so
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT

perf_run() { # nqn seconds
    taskset -c 1 "$SPDK/build/bin/spdk_nvme_perf" --no-huge -s 512 -c 0x2 -q "$QD" -o "$BS" -w "$RW" -t "$2" \
        -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$1" 2>&1 | awk '/^Total/ {print $3}'
}
counters() { # pid -> "cpu_ticks read_write_syscalls"
    echo "$(awk '{print $14 + $15}' /proc/$1/stat) $(awk '/^syscr/ {r = $2} /^syscw/ {w = $2} END {print r + w}' /proc/$1/io)"
}
ctxsw() { # pid: context switches of every thread
    local n=0
    for t in /proc/$1/task/*; do
        n=$((n + $(awk '/ctxt_switches/ {s += $2} END {print s}' "$t/status")))
    done
    echo $n
}
profile_start() { # pid
    jcmd "$1" JVMTI.agent_load "$AP" "\"start,event=$EVENT,interval=1ms,threads,file=$OUT/$SIDE.collapsed,collapsed\"" > /dev/null
    C0=$(ctxsw "$1"); read -r T0 S0 < <(counters "$1"); W0=$(date +%s.%N)
}
profile_stop() { # pid
    C1=$(ctxsw "$1"); read -r T1 S1 < <(counters "$1"); W1=$(date +%s.%N)
    jcmd "$1" JVMTI.agent_load "$AP" "\"stop,file=$OUT/$SIDE.collapsed,collapsed\"" > /dev/null
}
report() { # iops
    awk -v i="$1" -v w="$(echo "$W1 - $W0" | bc)" -v c=$((C1 - C0)) -v s=$((S1 - S0)) -v t=$((T1 - T0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
        n = i * w; printf "%.0f IOPS; per I/O: %.3f context switches, %.3f read/write syscalls, %.2f us CPU\n", i, c / n, s / n, t / hz * 1e6 / n }'
}

if [ "$SIDE" = target ]; then
    taskset -c 0 java $JVM_FLAGS -jar "$JAR" target --listen tcp://127.0.0.1:$PORT --subsystem $OUR_NQN --namespace "$OUR_NAMESPACE" \
        $OUR_TARGET_ARGS > "$OUT/target.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 300); do grep -q "listening on" "$OUT/target.out" && break; sleep 0.1; done
    perf_run $OUR_NQN 4 > /dev/null   # the JIT compiles first
    profile_start "${PIDS[0]}"
    iops=$(perf_run $OUR_NQN "$RUNTIME")
    profile_stop "${PIDS[0]}"
    report "$iops"
else
    spdk_target /tmp/spdk-profile.sock "$OUT/spdk.out" --no-huge -s 1536
    PIDS+=($SPDK_PID)
    # 4 s of ramp (the JIT compiles), then the profile over RUNTIME s of the measured run
    taskset -c 1 java $JVM_FLAGS -jar "$JAR" bench "nvme+tcp://127.0.0.1:$PORT/$SPDK_NQN" --rw "$RW" --bs "$BS" \
        --iodepth "$QD" --ramp_time 4 --runtime "$((RUNTIME + 2))" --output-format json $OUR_HOST_ARGS \
        > "$OUT/bench.json" 2> "$OUT/bench.err" &
    BENCH=$!
    PIDS+=($BENCH)
    sleep 5
    profile_start "$BENCH"
    sleep "$RUNTIME"
    profile_stop "$BENCH"
    wait "$BENCH" || { echo "nvmeof bench failed: $(cat "$OUT/bench.err")"; exit 1; }
    report "$(python3 -c 'import json, sys
t = open(sys.argv[1]).read()   # the agent says "Profiling started" on the same stdout
j = json.loads(t[t.index("{"):])["jobs"][0]
print((j["read"] if j["read"]["iops"] > 0 else j["write"])["iops"])' "$OUT/bench.json")"
fi

python3 - "$OUT/$SIDE.collapsed" <<'PY'
import collections, sys
selfc, incl, thr, total = collections.Counter(), collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[1]):
    stack, n = line.rstrip().rsplit(' ', 1)
    n = int(n); total += n
    frames = stack.split(';')
    selfc[frames[-1]] += n; thr[frames[0]] += n
    for f in set(frames[1:]):
        incl[f] += n
print(f"{total} samples")
for title, c, k in (("threads", thr, 6), ("self", selfc, 25), ("inclusive", incl, 40)):
    print("== " + title)
    for f, v in c.most_common(k):
        print(f"{100.0 * v / total:5.1f}% {f}")
PY
echo "collapsed stacks: $OUT/$SIDE.collapsed (flame graph: async-profiler's converter, or any collapsed-stack viewer)"
