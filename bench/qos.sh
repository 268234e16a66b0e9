#!/usr/bin/env bash
# QoS: what `nvmeof bench` measures against limits set with `nvmeof qos set` on a running target
# (the launcher with its defaults, a RAM namespace, loopback), each case for ROUNDS rounds of
# RUNTIME seconds, interleaved; prints each case's median against its limit.
#   bench/qos.sh [ROUNDS] [RUNTIME]      (defaults: 3 rounds of 10 s)
# Cases: a namespace at 5000 IOPS (4 KiB randread QD32; the issue's "5,000 +- 5%"), a namespace at
# 50 MiB/s of writes (128 KiB randwrite QD16), a host at 2000 IOPS over two connections of its own
# (4 KiB randread QD32, two bench processes at once), and no limit (the ceiling, for scale).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jar=$here/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "build first: mvn -DskipTests package" >&2; exit 1; }
rounds=${1:-3}
runtime=${2:-10}
work=$(mktemp -d)
tpid=
trap '[ -n "$tpid" ] && { kill "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true; }; rm -rf "$work"' EXIT
NQN=nqn.2026-11.io.nvmeof:qos-bench
HOST=nqn.2026-11.io.nvmeof:qos-bench-host
java -jar "$jar" target --listen tcp://127.0.0.1:0 --subsystem $NQN --namespace ram:256M \
  --rpc-socket "$work/rpc.sock" >"$work/t.out" 2>&1 &
tpid=$!
for _ in $(seq 300); do grep -q "management API on" "$work/t.out" && grep -q "port 1 " "$work/t.out" && break; sleep 0.1; done
port=$(sed -n 's/.*127.0.0.1:\([0-9]*\) port 1 .*/\1/p' "$work/t.out")
uri="nvme+tcp://127.0.0.1:$port/$NQN"
qos() { java -jar "$jar" qos set --socket "$work/rpc.sock" "$@" >/dev/null; }
# bench RW BS QD [HOSTNQN]: the IOPS and MiB/s one bench measured
bench() {
  java -jar "$jar" bench "$uri" --rw "$1" --bs "$2" --iodepth "$3" ${4:+--hostnqn "$4"} --ramp_time 1 \
    --runtime "$runtime" -o json | python3 -c "
import json, sys
j = json.load(sys.stdin)['jobs'][0]
d = j['read'] if j['read']['io_bytes'] else j['write']
print(round(d['iops'], 1), round(d['bw_bytes'] / 1048576, 2))"
}
clear_all() {
  qos --subsystem $NQN --nsid 1 --rw-ios-per-second 0
  qos --host $HOST --rw-ios-per-second 0
}
for round in $(seq "$rounds"); do
  clear_all
  echo "round $round none-iops $(bench randread 4k 32)"
  qos --subsystem $NQN --nsid 1 --rw-ios-per-second 5000
  echo "round $round ns-5000-iops $(bench randread 4k 32)"
  clear_all
  qos --subsystem $NQN --nsid 1 --w-megabytes-per-second 50
  echo "round $round ns-50-wmbs $(bench randwrite 128k 16)"
  clear_all
  qos --host $HOST --rw-ios-per-second 2000
  bench randread 4k 32 $HOST >"$work/a" & a=$!
  bench randread 4k 32 $HOST >"$work/b"
  wait $a
  echo "round $round host-2000-iops $(python3 -c "
a, b = open('$work/a').read().split(), open('$work/b').read().split()
print(round(float(a[0]) + float(b[0]), 1), round(float(a[1]) + float(b[1]), 2))")"
done | tee "$work/all.log"
python3 - "$work/all.log" <<'PY'
import re, statistics, sys
d = {}
for l in open(sys.argv[1]):
    m = re.match(r'round \d+ (\S+) ([\d.]+) ([\d.]+)', l)
    if m:
        d.setdefault(m[1], []).append((float(m[2]), float(m[3])))
print("case               limit        median            of the limit")
for case, limit, unit, i in (("none-iops", None, "IOPS", 0), ("ns-5000-iops", 5000, "IOPS", 0),
                             ("ns-50-wmbs", 50, "MiB/s", 1), ("host-2000-iops", 2000, "IOPS", 0)):
    med = statistics.median(v[i] for v in d[case])
    share = f"{med / limit:.3f}" if limit else "-"
    print(f"{case:18} {limit or 'none':>6} {unit:5} {med:10.1f} {unit:5}   {share}")
PY
