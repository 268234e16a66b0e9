#!/usr/bin/env bash
# What TLS 1.3 costs on NVMe/TCP: our bench against our target on loopback, in the clear and
# over TLS (TLS_AES_128_GCM_SHA256, the PSK of a configured NVMeTLSkey-1:01 key), alternately
# (clear, TLS, clear, TLS ...), target pinned to core 0 and host to core 1, a 512 MiB RAM
# namespace; prints medians and the TLS/clear ratio. A benchmark, not a test.
#
#   bench/tls-cost.sh [ROUNDS]     (default 3; RUNTIME seconds per run, default 5)
#
# CPU per I/O of the target is utime+stime from /proc/PID/stat over the measured run divided
# by its I/Os. One target serves the whole run (port with "tls": "optional"); each case starts
# with a warm-up run of each kind.
set -euo pipefail
ROUNDS=${1:-3}
RUNTIME=${RUNTIME:-5}
RAMP=${RAMP:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
NQN=nqn.2026-11.io.nvmeof:tls-bench
HOST=nqn.2014-08.org.nvmexpress:uuid:5b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
PORT=${PORT:-4430}
WORK=$(mktemp -d)
chmod 700 "$WORK"
TARGET_PID=
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
trap '[ -n "$TARGET_PID" ] && kill "$TARGET_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

java -jar "$JAR" gen-tls-key >"$WORK/psk"
chmod 600 "$WORK/psk"
cat >"$WORK/target.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $PORT, "tls": "optional", "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "allowed_hosts": ["$HOST"], "namespaces": [{"nsid": 1, "backend": "ram", "size": "512M"}]}],
 "hosts": [{"nqn": "$HOST", "tls_key_file": "$WORK/psk"}]}
JSON
chmod 600 "$WORK/target.json"
taskset -c 0 java -jar "$JAR" target --config "$WORK/target.json" >"$WORK/target.out" 2>&1 &
TARGET_PID=$!
for _ in $(seq 300); do grep -q "listening on" "$WORK/target.out" && break; sleep 0.1; done
grep -q "listening on" "$WORK/target.out" || { echo "target did not start: $(cat "$WORK/target.out")"; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# bench KIND(clear|tls) QD BS RW: prints "IOPS MiB/s mean_us cpu_us_per_io"
run() {
    local extra=() before after out
    [ "$1" = tls ] && extra=(--tls-key-file "$WORK/psk")
    before=$(cpu_ticks "$TARGET_PID")
    out=$(taskset -c 1 java -jar "$JAR" bench "nvme+tcp://127.0.0.1:$PORT/$NQN" -q "$HOST" "${extra[@]}" --rw "$4" \
        --bs "$3" --iodepth "$2" --runtime "$RUNTIME" --ramp_time "$RAMP" --output-format json 2>/dev/null)
    after=$(cpu_ticks "$TARGET_PID")
    echo "$out" | python3 -c '
import json, sys
t, hz, rt, ramp = [float(x) for x in sys.argv[1:5]]
j = json.load(sys.stdin)["jobs"][0]
d = j["read"] if j["read"]["iops"] > 0 else j["write"]
ios = d["iops"] * (rt + ramp)
print("%.0f %.1f %.2f %.2f" % (d["iops"], d["bw"] / 1024.0, d["lat_ns"]["mean"] / 1000.0, (t / hz) * 1e6 / ios))' \
        "$((after - before))" "$(getconf CLK_TCK)" "$RUNTIME" "$RAMP"
}
median() { sort -g | awk '{a[NR] = $1} END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "TLS cost, NVMe/TCP on loopback, our target (core 0) and bench (core 1), $ROUNDS rounds of $RUNTIME s, medians"
printf "%-20s %12s %12s %7s %12s %12s %12s\n" case "IOPS clear" "IOPS TLS" ratio "lat us c/t" "MiB/s c/t" "CPU us/IO c/t"
for c in "randread-4k-qd1 1 4k randread" "randread-4k-qd32 32 4k randread" "read-128k-qd8 8 128k read" \
         "randwrite-4k-qd32 32 4k randwrite"; do
    set -- $c
    run clear "$2" "$3" "$4" >/dev/null; run tls "$2" "$3" "$4" >/dev/null   # warm-up
    : >"$WORK/clear"; : >"$WORK/tls"
    for _ in $(seq "$ROUNDS"); do
        run clear "$2" "$3" "$4" >>"$WORK/clear"
        run tls "$2" "$3" "$4" >>"$WORK/tls"
    done
    m() { cut -d' ' -f"$2" "$WORK/$1" | median; }
    printf "%-20s %12s %12s %7.2f %12s %12s %12s\n" "$1" "$(m clear 1)" "$(m tls 1)" \
        "$(echo "$(m tls 1) / $(m clear 1)" | bc -l)" "$(m clear 3)/$(m tls 3)" "$(m clear 2)/$(m tls 2)" \
        "$(m clear 4)/$(m tls 4)"
done
