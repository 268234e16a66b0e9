#!/usr/bin/env bash
# QD1 latency on one device beside 255 idle ones, against a JVM holding that device alone
# (issue 55: within 10%). A benchmark, not a test; ManyDevicesTest asserts the threads and memory.
#
#   bench/many-devices.sh [SECONDS] [ROUNDS]     (defaults 10 and 3)
#
# Starts our target (the launcher, defaults) with 64 subsystems of 4 null namespaces on two ports
# of 127.0.0.1, then ROUNDS times, alternately: a host JVM with one device (one subsystem through
# both ports, one namespace) and one with 256 (64 subsystems x 4 namespaces, two paths each), each
# reading 4 KiB at random at QD1 from its first device for 3 s unmeasured and SECONDS measured
# (io.nvmeof.tools.harness.ManyDevices, in the CLI jar). Prints each run and the medians.
set -euo pipefail
SECONDS_=${1:-10}
ROUNDS=${2:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
JAR=${JAR:-$HERE/cli/build/nvmeof.jar}
PORT=${PORT:-4420}
PREFIX=nqn.2026-12.io.nvmeof:many
WORK=$(mktemp -d)
TARGET_PID=
[ -f "$JAR" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$HERE/bench/ours.sh"
cleanup() {
    stop_our_target
    rm -rf "$WORK"
}
trap cleanup EXIT

{
    nqns=$(for s in $(seq 0 63); do printf '%s"%s-%d"' "$([ "$s" = 0 ] || echo ,)" "$PREFIX" "$s"; done)
    printf '{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": %d, "subsystems": [%s]},\n' "$PORT" "$nqns"
    printf '           {"portid": 2, "traddr": "127.0.0.1", "trsvcid": %d, "subsystems": [%s]}],\n' $((PORT + 1)) "$nqns"
    printf ' "subsystems": ['
    for s in $(seq 0 63); do
        [ "$s" = 0 ] || printf ',\n'
        printf '{"nqn": "%s-%d", "namespaces": [' "$PREFIX" "$s"
        for n in 1 2 3 4; do
            [ "$n" = 1 ] || printf ','
            printf '{"nsid": %d, "backend": "null", "size": "1G"}' "$n"
        done
        printf ']}'
    done
    printf ']}\n'
} > "$WORK/target.json"
our_target "$WORK/target.out" --config "$WORK/target.json"

one=()
many=()
for r in $(seq "$ROUNDS"); do
    for case in one many; do
        if [ "$case" = one ]; then subs=1; ns=1; else subs=64; ns=4; fi
        line=$(java -cp "$JAR" io.nvmeof.tools.harness.ManyDevices "127.0.0.1:$PORT,127.0.0.1:$((PORT + 1))" \
            "$PREFIX" "$subs" "$ns" 3 "$SECONDS_")
        echo "round $r: $line"
        mean=$(sed -n 's/.*mean_us=\([0-9.]*\).*/\1/p' <<< "$line")
        if [ "$case" = one ]; then one+=("$mean"); else many+=("$mean"); fi
    done
done
python3 - "${one[*]}" "${many[*]}" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
many = [float(x) for x in sys.argv[2].split()]
a, b = statistics.median(one), statistics.median(many)
print("QD1 mean latency, medians: 1 device %.2f us, 256 devices %.2f us: %.3f of the one (goal <= 1.10)" % (a, b, b / a))
PY
