#!/usr/bin/env bash
# nvmeof nbd against nbdkit on this machine, measured the same way: fio's nbd engine, 4 KiB
# random reads and writes at QD1 and QD32, RUNTIME seconds each (default 10), ROUNDS rounds
# (default 1). Ours: nvmeof target (a RAM namespace) + nvmeof nbd on a Unix socket; nbdkit:
# its memory plugin on a Unix socket. A third line, "init", is our initiator alone on the same
# target (nvmeof bench, the same job at the bridge's rate): what the fabric hop costs without NBD.
#
# CPU per request is user+system time (/proc) over the I/Os done, of the process that serves the
# client: the bridge for ours, nbdkit, nvmeof bench for init. "budget" is nbdkit's plus init's:
# the most the bridge may take (it does both jobs). Neither fio's nor the target's CPU is in them.
#
# TARGET_ARGS go to the target, NBD_ARGS to nvmeof nbd (both: defaults). Here the target shares
# two cores with fio and the bridge: at QD32 its adaptive polling takes cores they need
# (TARGET_ARGS=--busy-poll=off: randwrite QD32 0.82 of nbdkit against 0.66), at QD1 it halves
# the latency.
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
export NVMEOF_JAR=$jar
nvmeof=$top/packaging/src/bin/nvmeof  # it execs java: $! is the JVM's PID

port=$((20000 + RANDOM % 20000))
uri="nvme+tcp://127.0.0.1:$port/nqn.2026-12.io.nvmeof:bench"
# shellcheck disable=SC2086
"$nvmeof" target --listen "tcp://127.0.0.1:$port" --subsystem nqn.2026-12.io.nvmeof:bench --namespace ram:1G \
  ${TARGET_ARGS:-} >"$work/target.log" 2>&1 &
tpid=$!; pids+=($tpid)
for _ in $(seq 100); do grep -q "listening on" "$work/target.log" && break; sleep 0.2; done
# shellcheck disable=SC2086
"$nvmeof" nbd "$uri" ${NBD_ARGS:-} --socket "$work/ours.sock" >"$work/nbd.log" 2>&1 &
bpid=$!; pids+=($bpid)
nbdkit --foreground --unix "$work/kit.sock" memory 1G >"$work/kit.log" 2>&1 &
kpid=$!; pids+=($kpid)
for _ in $(seq 100); do [ -S "$work/ours.sock" ] && [ -S "$work/kit.sock" ] && break; sleep 0.2; done

ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
hz=$(getconf CLK_TCK)
report() { # name rw qd ticks json
  python3 - "$5" "$1" "$2" "$3" "$4" "$hz" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]  # fio's nbd engine says "connected" first
name, rw, qd, ticks, hz = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
d = j["read"] if "read" in rw else j["write"]
ios = d["total_ios"]
# the processes' CPU time covers the ramp too: per I/O over the I/Os of ramp and run, from the run's rate
cpu = ticks / hz * 1e6 / max(1, ios + d["iops"] * 2)
if name == "init":  # nvmeof bench's own CPU, over the run alone (fio's usr_cpu/sys_cpu: % of a core)
    cpu += (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e3 / max(1, ios)
print(f"{name:7s} {rw:9s} QD{qd:<3s} {d['iops']:10.0f} IOPS  p50 {d['clat_ns']['percentile']['50.000000']/1000:7.1f} us  CPU {cpu:6.1f} us/IO")
print(cpu, d["iops"], file=open(sys.argv[1] + ".cpu", "w"))
PY
}
fio_run() { # name socket rw qd pids...
  local name=$1 sock=$2 rw=$3 qd=$4; shift 4
  local before; before=$(ticks "$@")
  fio --name=b --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw="$rw" --bs=4k --iodepth="$qd" --size=1G \
    --time_based --runtime="$runtime" --ramp_time=2 --output-format=json >"$work/$name.json" 2>/dev/null
  report "$name" "$rw" "$qd" $(($(ticks "$@") - before)) "$work/$name.json"
}
init_run() { # rw qd iops: at the bridge's rate, where batching saves what it saved the bridge
  "$nvmeof" bench "$uri" --rw="$1" --bs=4k --iodepth="$2" --size=1G --time_based --runtime="$runtime" --ramp_time=2 \
    --rate_iops="$3" -o json >"$work/init.json" 2>/dev/null
  report init "$1" "$2" 0 "$work/init.json"
}
for r in $(seq "$rounds"); do
  echo "== round $r ($runtime s each)"
  for rw in randread randwrite; do
    for qd in 1 32; do
      fio_run ours "$work/ours.sock" $rw $qd $bpid
      fio_run nbdkit "$work/kit.sock" $rw $qd $kpid
      read -r ours ours_iops <"$work/ours.json.cpu"; read -r kit kit_iops <"$work/nbdkit.json.cpu"
      init_run $rw $qd "${ours_iops%.*}"
      read -r init _ <"$work/init.json.cpu"
      python3 -c "o,k,i,oi,ki=$ours,$kit,$init,$ours_iops,$kit_iops; print(f'        IOPS {oi/ki:.2f} of nbdkit; CPU {o:.1f} us/IO, budget {k+i:.1f} (nbdkit {k:.1f} + init {i:.1f}): {\"within\" if o <= k+i else \"OVER\"}')"
    done
  done
done
