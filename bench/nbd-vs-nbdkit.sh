#!/usr/bin/env bash
# nvmeof nbd against nbdkit on this machine, measured the same way: fio's nbd engine, 4 KiB
# random reads and writes at QD1 and QD32, RUNTIME seconds each (default 10), ROUNDS rounds
# (default 1). Ours: nvmeof target (a RAM namespace) + nvmeof nbd on a Unix socket; nbdkit:
# its memory plugin on a Unix socket. CPU per request is the processes' user+system time
# (/proc) over the I/Os fio did: for ours the target and the bridge together.
# Usage: bash bench/nbd-vs-nbdkit.sh [RUNTIME] [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runtime=${1:-10}
rounds=${2:-1}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 1; rm -rf "$work"; }
trap cleanup EXIT
for t in fio nbdkit; do command -v $t >/dev/null || { echo "SKIPPED: $t is not installed"; exit 0; }; done
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || (cd "$top" && mvn -q -B -DskipTests -pl cli -am package)

port=$((20000 + RANDOM % 20000))
NVMEOF_JAR=$jar "$top/packaging/src/bin/nvmeof" target --listen "tcp://127.0.0.1:$port" --subsystem nqn.2026-12.io.nvmeof:bench \
  --namespace ram:1G ${TARGET_ARGS:-} >"$work/target.log" 2>&1 &
tpid=$!; pids+=($tpid)
for _ in $(seq 100); do grep -q "listening on" "$work/target.log" && break; sleep 0.2; done
NVMEOF_JAR=$jar "$top/packaging/src/bin/nvmeof" nbd "nvme+tcp://127.0.0.1:$port/nqn.2026-12.io.nvmeof:bench" ${NBD_ARGS:-} \
  --socket "$work/ours.sock" >"$work/nbd.log" 2>&1 &
bpid=$!; pids+=($bpid)
nbdkit --foreground --unix "$work/kit.sock" memory 1G >"$work/kit.log" 2>&1 &
kpid=$!; pids+=($kpid)
for _ in $(seq 100); do [ -S "$work/ours.sock" ] && [ -S "$work/kit.sock" ] && break; sleep 0.2; done

ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
hz=$(getconf CLK_TCK)
run() { # name socket rw depth pids...
  local name=$1 sock=$2 rw=$3 qd=$4; shift 4
  local before; before=$(ticks "$@")
  fio --name=b --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw="$rw" --bs=4k --iodepth="$qd" --size=1G \
    --time_based --runtime="$runtime" --ramp_time=2 --output-format=json >"$work/out.json" 2>/dev/null
  local after; after=$(ticks "$@")
  python3 - "$work/out.json" "$name" "$rw" "$qd" $((after - before)) "$hz" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]  # fio's nbd engine says "connected" first
name, rw, qd, ticks, hz = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
d = j["read"] if "read" in rw else j["write"]
ios = d["total_ios"]
# the CPU time covers the ramp too: per I/O over the I/Os of ramp and run, estimated from the run's rate
ramp_ios = d["iops"] * 2
us = ticks / hz * 1e6 / max(1, ios + ramp_ios)
print(f"{name:7s} {rw:9s} QD{qd:<3s} {d['iops']:10.0f} IOPS  p50 {d['clat_ns']['percentile']['50.000000']/1000:7.1f} us  CPU {us:6.1f} us/IO")
PY
}
for r in $(seq "$rounds"); do
  echo "== round $r ($runtime s each)"
  for rw in randread randwrite; do
    for qd in 1 32; do
      run ours "$work/ours.sock" $rw $qd $tpid $bpid
      run nbdkit "$work/kit.sock" $rw $qd $kpid
    done
  done
done
