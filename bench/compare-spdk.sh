#!/usr/bin/env bash
# Ours against SPDK on NVMe/TCP over loopback, side by side: a benchmark, not a test.
#
#   bench/compare-spdk.sh [ROUNDS]        (default 3; SPDK built in $SPDK, default /var/tmp/spdk)
#   CASES="randread-qd32 randread-qd1" JAR=/path/other/nvmeof.jar bench/compare-spdk.sh 5
#
# Each case runs ours and SPDK's alternately, who goes first alternating too (A B, B A, A B ...:
# a disk whose speed drifts within a round favours neither), each side pinned to one core
# (target on core 0, host on core 1), a 512 MiB RAM (malloc) namespace of 4 KiB blocks, and
# prints the medians and their ratio. A fresh target per run; ours gets two warm-up runs first
# (a JIT has to compile before it is measured, as SPDK's code is compiled before it starts), and
# our bench, a fresh JVM each run, runs RAMP seconds (default 3) before it measures (--ramp_time).
# CPU time per I/O of a target is utime+stime from /proc/PID/stat over the measured run,
# divided by the I/Os of that run, for both targets (SPDK's reactor polls: one whole core).
#
# The file-* cases serve one O_DIRECT file on local disk instead (FILE_SIZE MiB, default 1024, in
# FILE_DIR, default /var/tmp; written through once so no block is a hole): ours as
# file:PATH,direct, SPDK's through an aio bdev on the same file.
#
# Needs: the CLI jar (mvn -B -q install -DskipTests), SPDK built by bench/spdk/build-spdk.sh,
# taskset, python3. Nothing else may run on cores 0 and 1 for a fair number.
set -euo pipefail
ROUNDS=${1:-3}
CASES=${CASES:-}
OUR_TARGET_ARGS=${OUR_TARGET_ARGS:-}   # e.g. "--threads 1 --busy-poll", to poll as SPDK's reactor does
OUR_HOST_ARGS=${OUR_HOST_ARGS:-}       # e.g. "--busy-poll" (or "--busy-poll=200") for nvmeof bench
RAMP=${RAMP:-3}                        # seconds our bench runs before it measures
# SPDK on hugepages, as it is deployed, when 1.5 GiB of them are free on a mounted hugetlbfs
# (as root: echo 1024 > /proc/sys/vm/nr_hugepages; mount -t hugetlbfs nodev /dev/hugepages);
# otherwise --no-huge. Our RAM namespace takes transparent huge pages where the kernel offers them.
SPDK_HUGE=${SPDK_HUGE:-auto}
SPDK=${SPDK:-/var/tmp/spdk}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
RUNTIME=${RUNTIME:-5}
OUR_NAMESPACE=ram:512M
FILE_SIZE=${FILE_SIZE:-1024}
FILE_DIR=${FILE_DIR:-/var/tmp}
FILE=
OUR_NQN=nqn.2026-11.io.nvmeof:bench
SPDK_NQN=nqn.2016-06.io.spdk:cnode1
PORT=4420
WORK=$(mktemp -d)
TARGET_PID=

[ -x "$SPDK/build/bin/spdk_nvme_perf" ] || { echo "SPDK is not built in $SPDK (see bench/spdk/README.md): skipped"; exit 0; }
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/spdk.sh"
export LD_LIBRARY_PATH=$SPDK/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

stop_target() {
    if [ -n "$TARGET_PID" ]; then
        kill "$TARGET_PID" 2>/dev/null || true
        wait "$TARGET_PID" 2>/dev/null || true
        TARGET_PID=
    fi
}
trap 'stop_target; rm -rf "$WORK"; [ -z "$FILE" ] || rm -f "$FILE"' EXIT

if [ "$SPDK_HUGE" = auto ]; then
    free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
    if grep -q " hugetlbfs " /proc/mounts && [ "${free:-0}" -ge 768 ]; then SPDK_HUGE=1; else SPDK_HUGE=0; fi
fi
if [ "$SPDK_HUGE" = 1 ]; then
    SPDK_TGT_MEM="-s 1024"; SPDK_PERF_MEM="-s 512"; SPDK_MEMORY="hugepages"
else
    SPDK_TGT_MEM="--no-huge -s 1536"; SPDK_PERF_MEM="--no-huge -s 512"; SPDK_MEMORY="no hugepages (--no-huge)"
fi

start_ours() {
    taskset -c 0 java -jar "$JAR" target --listen tcp://127.0.0.1:$PORT --subsystem $OUR_NQN \
        --namespace "$OUR_NAMESPACE" $OUR_TARGET_ARGS > "$WORK/ours.out" 2>&1 &
    TARGET_PID=$!
    for _ in $(seq 300); do
        grep -q "listening on" "$WORK/ours.out" && return 0
        sleep 0.1
    done
    echo "our target did not start: $(cat "$WORK/ours.out")"; exit 1
}

start_spdk() {
    spdk_target /tmp/spdk-bench.sock "$WORK/spdk.out" $SPDK_TGT_MEM
    TARGET_PID=$SPDK_PID
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# spdk_nvme_perf against the running target; prints "IOPS MiB/s mean_us cpu_us_per_io"
spdk_perf() { # nqn qd bs workload
    local before after out
    before=$(cpu_ticks "$TARGET_PID")
    out=$(taskset -c 1 "$SPDK/build/bin/spdk_nvme_perf" $SPDK_PERF_MEM -c 0x2 -q "$2" -o "$3" -w "$4" \
        -t "$RUNTIME" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$1" 2>&1)
    after=$(cpu_ticks "$TARGET_PID")
    echo "$out" | awk -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v rt="$RUNTIME" '
        /^Total/ { split($0, a, ":"); split(a[2], f, " "); iops = f[1]; mibs = f[2]; lat = f[3] }
        END { if (iops == "") { print "0 0 0 0"; exit }
              printf "%.0f %.1f %.2f %.2f\n", iops, mibs, lat, (t / hz) * 1e6 / (iops * rt) }'
}

# our bench against the running target; prints "IOPS MiB/s mean_us"
our_bench() { # nqn qd bs rw
    taskset -c 1 java -jar "$JAR" bench "nvme+tcp://127.0.0.1:$PORT/$1" --rw "$4" --bs "$3" --iodepth "$2" \
        --runtime "$RUNTIME" --ramp_time "$RAMP" --output-format json $OUR_HOST_ARGS 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
d = j["read"] if j["read"]["iops"] > 0 else j["write"]
print("%.0f %.1f %.2f" % (d["iops"], d["bw"] / 1024.0, d["lat_ns"]["mean"] / 1000.0))'
}

median() { sort -g | awk '{a[NR] = $1} END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

declare -A R
record() { R[$1]+="$2"$'\n'; }

# The file the file-* cases serve, made on first use.
use_file() {
    if [ -z "$FILE" ]; then
        FILE=$(mktemp "$FILE_DIR/nvmeof-bench.XXXXXX")
        dd if=/dev/zero of="$FILE" bs=1M count="$FILE_SIZE" oflag=direct status=none
    fi
    OUR_NAMESPACE="file:$FILE,direct"
    SPDK_AIO_FILE=$FILE
}

target_case() { # name qd bs workload field(1 iops, 2 MiB/s, 3 lat, 4 cpu)
    OUR_NAMESPACE=ram:512M
    SPDK_AIO_FILE=
    case $1 in file-*) use_file ;; esac
    local side
    for i in $(seq "$ROUNDS"); do
        # who goes first alternates: a disk (or the cache of the host under a VM) that speeds up
        # or slows down over a round favours neither
        for side in $( ((i % 2)) && echo "ours spdk" || echo "spdk ours"); do
            if [ "$side" = ours ]; then
                start_ours
                # warm-up: two connections, as a target that has served hosts before: the second
                # connection's setup deoptimizes code the JIT compiled from the first one's I/O
                # alone, and it runs slower for about a second while it recompiles
                spdk_perf $OUR_NQN "$2" "$3" "$4" > /dev/null
                spdk_perf $OUR_NQN "$2" "$3" "$4" > /dev/null
                read -r iops mibs lat cpu < <(spdk_perf $OUR_NQN "$2" "$3" "$4")
            else
                start_spdk
                read -r iops mibs lat cpu < <(spdk_perf $SPDK_NQN "$2" "$3" "$4")
            fi
            stop_target
            record "$1.$side" "$(echo "$iops $mibs $lat $cpu" | cut -d' ' -f"$5")"
            [ "$1" = "randread-qd32" ] && record "cpu.$side" "$cpu"
        done
        echo "  $1 round $i: ours $(echo "${R[$1.ours]}" | tail -2 | head -1), spdk $(echo "${R[$1.spdk]}" | tail -2 | head -1)" >&2
    done
}

initiator_case() { # name qd bs rw workload
    start_spdk
    for i in $(seq "$ROUNDS"); do
        read -r iops _ _ < <(our_bench $SPDK_NQN "$2" "$3" "$4")
        record "$1.ours" "$iops"
        read -r iops _ _ _ < <(spdk_perf $SPDK_NQN "$2" "$3" "$5")
        record "$1.spdk" "$iops"
        echo "  $1 round $i: ours $(echo "${R[$1.ours]}" | tail -2 | head -1), spdk $(echo "${R[$1.spdk]}" | tail -2 | head -1)" >&2
    done
    stop_target
}

echo "nvmeof-java vs SPDK, NVMe/TCP on loopback, $ROUNDS rounds of ${RUNTIME} s, medians (target core 0, host core 1), SPDK on $SPDK_MEMORY${OUR_TARGET_ARGS:+, our target $OUR_TARGET_ARGS}${OUR_HOST_ARGS:+, our host $OUR_HOST_ARGS}" >&2
want() { [ -z "$CASES" ] || [[ " $CASES " == *" $1 "* ]]; }
want randread-qd32 && target_case randread-qd32 32 4096 randread 1
want randread-qd1 && target_case randread-qd1 1 4096 randread 3
want init-randread-qd32 && initiator_case init-randread-qd32 32 4k randread randread
want randwrite-qd32 && target_case randwrite-qd32 32 4096 randwrite 1
want read128k-qd16 && target_case read128k-qd16 16 131072 read 2
want file-randread-qd32 && target_case file-randread-qd32 32 4096 randread 1
want file-randread-qd1 && target_case file-randread-qd1 1 4096 randread 3
want file-randwrite-qd32 && target_case file-randwrite-qd32 32 4096 randwrite 1
want file-randwrite-qd1 && target_case file-randwrite-qd1 1 4096 randwrite 3
want file-read128k-qd16 && target_case file-read128k-qd16 16 131072 read 2

row() { # label key unit goal higher_is_better
    local ours spdk
    [ -n "${R[$2.ours]:-}" ] || return 0
    ours=$(printf '%s' "${R[$2.ours]}" | median)
    spdk=$(printf '%s' "${R[$2.spdk]}" | median)
    awk -v l="$1" -v o="$ours" -v s="$spdk" -v u="$3" -v g="$4" \
        'BEGIN { printf "| %s | %s %s | %s %s | %.2f (%s) |\n", l, o, u, s, u, (s > 0 ? o / s : 0), g }'
}
echo
echo "| case | ours | SPDK | ratio (goal) |"
echo "|---|---|---|---|"
row "target: spdk_nvme_perf (core 1) -> target (core 0), randread QD32" randread-qd32 IOPS ">= 1.0"
row "target: same, randread QD1 mean latency" randread-qd1 us "<= 1.2 with defaults"
row "initiator: nvmeof bench vs spdk_nvme_perf (core 1) -> SPDK target (core 0), randread QD32" init-randread-qd32 IOPS ">= 0.9 with defaults"
row "target: spdk_nvme_perf -> target, randwrite QD32" randwrite-qd32 IOPS ">= 1.0"
row "target: spdk_nvme_perf -> target, 128 KiB sequential read QD16" read128k-qd16 MiB/s ">= 1.0"
row "target CPU time per I/O at randread QD32 (utime+stime / I/Os)" cpu us "<= 1.0"
row "file: O_DIRECT file, SPDK through an aio bdev; randread QD32" file-randread-qd32 IOPS ">= 1.0"
row "file: randread QD1 mean latency" file-randread-qd1 us "<= 1.0"
row "file: randwrite QD32" file-randwrite-qd32 IOPS ">= 1.0"
row "file: randwrite QD1 mean latency" file-randwrite-qd1 us "<= 1.0"
row "file: 128 KiB sequential read QD16" file-read128k-qd16 MiB/s ">= 1.0"
