#!/usr/bin/env bash
# What TLS 1.3 costs on NVMe/TCP: our bench against our target on loopback, in the clear and
# over TLS (TLS_AES_128_GCM_SHA256, the PSK of a configured NVMeTLSkey-1:01 key), alternately
# (clear, TLS, clear, TLS ...), target pinned to core 0 and host to core 1, a 512 MiB RAM
# namespace; prints medians, the TLS/clear ratio, and issue 31's goal 3: TLS's extra CPU per
# I/O (target and host each) against what the JVM's own AES-GCM takes for that I/O's records,
# measured first by JMH (AesGcmBench.jvm, on the idle core 0). A benchmark, not a test.
#
#   bench/tls-cost.sh [ROUNDS]     (default 3; RUNTIME seconds per run, default 8)
#
# CPU per I/O of each process is utime+stime from /proc/PID/stat over the steady middle of the
# run (from about 1 s after the ramp to 2 s before the end) divided by the I/Os in that window. One
# target serves the whole run (port with "tls": "optional"); each case starts with a warm-up run
# of each kind. The JVM's AES-GCM per I/O is one record each way: a 4 KiB I/O seals or opens a
# 4,145-byte record (data PDU and response) and a 73-byte one (the command); a 128 KiB read
# eight 16,385-byte ones and a 73-byte one. At QD32 one record often carries several
# responses, so this is the upper end of what the cryptography needs.
set -euo pipefail
ROUNDS=${1:-3}
RUNTIME=${RUNTIME:-8}
RAMP=${RAMP:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
MICRO=${MICRO:-$HERE/microbench/build/benchmarks.jar}
NQN=nqn.2026-11.io.nvmeof:tls-bench
HOST=nqn.2014-08.org.nvmexpress:uuid:5b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
# a host with a TLS key is refused in the clear, so the clear runs are another host's
CLEAR_HOST=nqn.2014-08.org.nvmexpress:uuid:5b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e
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
 "subsystems": [{"nqn": "$NQN", "allowed_hosts": ["$HOST", "$CLEAR_HOST"], "namespaces": [{"nsid": 1, "backend": "ram", "size": "512M"}]}],
 "hosts": [{"nqn": "$HOST", "tls_key_file": "$WORK/psk"}]}
JSON
chmod 600 "$WORK/target.json"
taskset -c 0 java -jar "$JAR" target --config "$WORK/target.json" >"$WORK/target.out" 2>&1 &
TARGET_PID=$!
for _ in $(seq 300); do grep -q "listening on" "$WORK/target.out" && break; sleep 0.1; done
grep -q "listening on" "$WORK/target.out" || { echo "target did not start: $(cat "$WORK/target.out")"; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# bench KIND(clear|tls) QD BS RW: prints "IOPS MiB/s mean_us target_cpu_us_per_io host_cpu_us_per_io"
run() {
    local extra=(-q "$CLEAR_HOST") t0 t1 h0 h1 pid window
    [ "$1" = tls ] && extra=(-q "$HOST" --tls-key-file "$WORK/psk")
    taskset -c 1 java -jar "$JAR" bench "nvme+tcp://127.0.0.1:$PORT/$NQN" "${extra[@]}" --rw "$4" \
        --bs "$3" --iodepth "$2" --runtime "$RUNTIME" --ramp_time "$RAMP" --output-format json >"$WORK/out.json" 2>"$WORK/bench.err" &
    pid=$!
    window=$((RUNTIME - 3))
    sleep "$((RAMP + 2))"   # JVM start (about 1 s), the ramp, 1 s more
    t0=$(cpu_ticks "$TARGET_PID"); h0=$(cpu_ticks "$pid" 2>/dev/null) || { wait "$pid"; echo "bench ended early: $(cat "$WORK/bench.err")" >&2; exit 1; }
    sleep "$window"
    t1=$(cpu_ticks "$TARGET_PID"); h1=$(cpu_ticks "$pid")
    wait "$pid" || { echo "bench failed: $(cat "$WORK/bench.err")" >&2; exit 1; }
    python3 -c '
import json, sys
t, h, hz, w = [float(x) for x in sys.argv[1:5]]
j = json.load(open(sys.argv[5]))["jobs"][0]
d = j["read"] if j["read"]["iops"] > 0 else j["write"]
ios = d["iops"] * w
print("%.0f %.1f %.2f %.2f %.2f" % (d["iops"], d["bw"] / 1024.0, d["lat_ns"]["mean"] / 1000.0,
      (t / hz) * 1e6 / ios, (h / hz) * 1e6 / ios))' \
        "$((t1 - t0))" "$((h1 - h0))" "$(getconf CLK_TCK)" "$window" "$WORK/out.json"
}
median() { sort -g | awk '{a[NR] = $1} END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# the JVM's own AES-GCM per record size, ns (JMH, idle core 0, before the target is loaded), with
# the plaintext hot in the caches ("cache") and coming from DRAM as a RAM namespace's does ("memory")
declare -A JVM_NS
if [ -f "$MICRO" ]; then
    while read -r size src ns; do JVM_NS[$size:$src]=$ns; done < <(taskset -c 0 java -jar "$MICRO" 'AesGcmBench.jvm$' \
        -wi 2 -w 1 -i 3 -r 1 -f 1 -jvmArgs -Xmx1g -rf csv -rff "$WORK/jmh.csv" >/dev/null 2>&1
        tail -n +2 "$WORK/jmh.csv" | tr -d '"\r' | awk -F, '{print $8, $9, $5}')
    for src in cache memory; do
        printf "the JVM's AES-GCM (AesGcmBench.jvm, %s), ns per record sealed: 73 B %.0f, 4145 B %.0f, 16385 B %.0f\n" \
            "$src" "${JVM_NS[73:$src]:-0}" "${JVM_NS[4145:$src]:-0}" "${JVM_NS[16385:$src]:-0}"
    done
else
    echo "no $MICRO (mvn -B -q package -DskipTests builds it): no JMH figure, no goal-3 ratio"
fi
# crypto_us CASE SOURCE: the JVM's AES-GCM for one I/O's records, us
crypto_us() {
    [ -n "${JVM_NS[73:$2]:-}" ] || { echo 0; return; }
    case "$1" in
        read-128k-qd8) echo "(8 * ${JVM_NS[16385:$2]} + ${JVM_NS[73:$2]}) / 1000" | bc -l ;;
        *) echo "(${JVM_NS[4145:$2]} + ${JVM_NS[73:$2]}) / 1000" | bc -l ;;
    esac
}

echo "TLS cost, NVMe/TCP on loopback, our target (core 0) and bench (core 1), $ROUNDS rounds of $RUNTIME s, medians"
echo "goal 3: (TLS - clear CPU per I/O) / the JVM's AES-GCM for that I/O's records <= 1.2, target and host each;"
echo "x c/m: against the JMH figure with the plaintext in the caches / coming from memory"
printf "%-18s %9s %9s %6s %13s %13s %13s %11s %11s %11s\n" case "IOPS clr" "IOPS TLS" ratio "lat us c/t" \
    "tgt us/IO c/t" "host us/IO c/t" "AES us c/m" "tgt x c/m" "host x c/m"
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
    aes_c=$(crypto_us "$1" cache); aes_m=$(crypto_us "$1" memory)
    x() {
        [ "$aes_c" = 0 ] && { echo -; return; }
        local d; d=$(echo "$(m tls "$1") - $(m clear "$1")" | bc -l)
        printf "%.2f/%.2f" "$(echo "$d / $aes_c" | bc -l)" "$(echo "$d / $aes_m" | bc -l)"
    }
    printf "%-18s %9s %9s %6.2f %13s %13s %13s %11s %11s %11s\n" "$1" "$(m clear 1)" "$(m tls 1)" \
        "$(echo "$(m tls 1) / $(m clear 1)" | bc -l)" "$(m clear 3)/$(m tls 3)" "$(m clear 4)/$(m tls 4)" \
        "$(m clear 5)/$(m tls 5)" "$(printf "%.1f/%.1f" "$aes_c" "$aes_m")" "$(x 4)" "$(x 5)"
done
