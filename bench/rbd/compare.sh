#!/usr/bin/env bash
# compare.sh [SECONDS]: one RBD image served by our target and by SPDK's nvmf_tgt (bdev_rbd),
# driven by the same clients, against librbd's own `rbd bench` (the ceiling), on a throwaway
# one-node cluster (test/ceph/ceph-cluster.sh). The cluster and the clients run on core 0, the
# target under test on core 1. Prints 4 KiB randread and randwrite IOPS at QD32, mean latency
# at QD1, and the target process's CPU time per I/O (all its threads, librbd's included).
#
# Needs: Ceph's packages (ceph-mon ceph-osd ceph-common librbd1), the built jar
# (cli/build/nvmeof.jar), and for SPDK a build from bench/spdk/build-spdk.sh in $SPDK (default
# /var/tmp/spdk); without it the SPDK rows are skipped, saying so. Compare within one run:
# timings on a shared machine are noisy.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-10}
S=${SPDK:-/var/tmp/spdk}
work=$(mktemp -d)
nqn=nqn.2026-11.io.nvmeof:rbdbench
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$here/test/ceph/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# the cluster on core 0, as the clients
eval "$(taskset -c 0 "$here/test/ceph/ceph-cluster.sh" start "$work/ceph" 2>/dev/null)"
rbd create --size 1G rbd/bench
# every object written once, so reads hit data
taskset -c 0 rbd bench --io-type write --io-size 4M --io-threads 4 --io-total 1G --io-pattern seq rbd/bench >/dev/null

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

echo "== librbd's own rbd bench on core 1 (the ceiling), ${secs}-ish s each"
for io in read write; do
  total=$((secs * 20000 * 4096))
  out=$( { /usr/bin/time -f "cpu %U %S" taskset -c 1 rbd bench --io-type $io --io-size 4K --io-threads 32 \
      --io-total $total --io-pattern rand rbd/bench; } 2>&1)
  echo "rbd bench rand$io qd32: $(echo "$out" | awk -v ios=$((total / 4096)) '/elapsed:/ {r = $6 " IOPS over " $2 " s"}
      /^cpu / {c = ($2 + $3) * 1e6 / ios} END {printf "%s, its CPU %.1f us per I/O\n", r, c}')"
done
out=$(taskset -c 1 rbd bench --io-type read --io-size 4K --io-threads 1 --io-total $((secs * 500 * 4096)) --io-pattern rand rbd/bench)
echo "rbd bench randread qd1: $(echo "$out" | awk '/elapsed:/ {printf "%.0f us mean\n", 1e6 / $6}')"

echo "== one handle or two on one image: rbd bench randwrite qd32 as one client, then as two of qd16 at once"
total=$((secs * 10000 * 4096))
one=$(taskset -c 1 rbd bench --io-type write --io-size 4K --io-threads 32 --io-total $((total * 2)) --io-pattern rand rbd/bench \
    | awk '/elapsed:/ {print $6}')
taskset -c 1 rbd bench --io-type write --io-size 4K --io-threads 16 --io-total $total --io-pattern rand rbd/bench > "$work/a" &
a=$!
taskset -c 1 rbd bench --io-type write --io-size 4K --io-threads 16 --io-total $total --io-pattern rand rbd/bench > "$work/b" &
b=$!
wait $a $b
two=$(cat "$work/a" "$work/b" | awk '/elapsed:/ {s += $6} END {print s}')
echo "one handle: $one IOPS; two handles (the exclusive lock passed between them): $two IOPS together"

# a run of $1 (a command line) against the target with PID $2: its output's IOPS line and CPU per I/O
measure() {
  local name=$1 pid=$2 uri=$3 rw qd
  for rw in randread randwrite; do
    local before; before=$(cpu_ticks "$pid")
    local json; json=$(taskset -c 0 java -jar "$here/cli/build/nvmeof.jar" bench "$uri" --rw $rw --bs 4k --iodepth 32 \
        --runtime "$secs" -o json 2>/dev/null)
    local after; after=$(cpu_ticks "$pid")
    local dir=${rw#rand}
    python3 - "$json" "$before" "$after" "$hz" "$name" "$rw" "$dir" <<'PY'
import json, sys
j = json.loads(sys.argv[1]); before, after, hz = map(int, sys.argv[2:5])
d = j[sys.argv[7]] if sys.argv[7] in j else j["jobs"][0][sys.argv[7]]
ios = d["total_ios"]; iops = d["iops"]
print(f"{sys.argv[5]} {sys.argv[6]} qd32: {iops:.0f} IOPS, target CPU {1e6 * (after - before) / hz / max(ios, 1):.1f} us per I/O")
PY
  done
  local json; json=$(taskset -c 0 java -jar "$here/cli/build/nvmeof.jar" bench "$uri" --rw randread --bs 4k --iodepth 1 \
      --runtime "$secs" -o json 2>/dev/null)
  python3 - "$json" "$name" <<'PY'
import json, sys
j = json.loads(sys.argv[1]); d = j["read"] if "read" in j else j["jobs"][0]["read"]
lat = d.get("lat_ns", d.get("clat_ns", {})).get("mean", 0) / 1000
print(f"{sys.argv[2]} randread qd1: {lat:.0f} us mean")
PY
}

# our target with its defaults, then with each set of flags in OURS_VARIANTS (';'-separated)
IFS=';' read -r -a variants <<<"${OURS_VARIANTS:-}"
for flags in "" "${variants[@]}"; do
  echo "== our target on core 1 (nvmeof bench on core 0)${flags:+ with $flags}"
  # shellcheck disable=SC2086
  taskset -c 1 java -jar "$here/cli/build/nvmeof.jar" target --listen tcp://127.0.0.1:4420 --subsystem $nqn \
      --namespace "rbd:rbd/bench,conf=$CEPH_CONF,bs=4096" $flags > "$work/ours.log" 2>&1 &
  pids+=($!); ours=$!
  until grep -q listening "$work/ours.log"; do sleep 0.5; done
  measure "ours${flags:+ ($flags)}" $ours "nvme+tcp://127.0.0.1:4420/$nqn"
  kill $ours; wait $ours || true
done

if [ -x "$S/build/bin/nvmf_tgt" ]; then
  echo "== SPDK nvmf_tgt with bdev_rbd on core 1 (nvmeof bench on core 0)"
  export LD_LIBRARY_PATH=$S/build/lib
  taskset -c 1 "$S/build/bin/nvmf_tgt" -m 0x2 --no-huge -s 1536 --no-pci -r "$work/spdk.sock" > "$work/spdk.log" 2>&1 &
  pids+=($!); spdk=$!
  rpc() { python3 "$S/scripts/rpc.py" -s "$work/spdk.sock" "$@" >/dev/null; }
  until [ -S "$work/spdk.sock" ]; do sleep 0.5; done
  rpc nvmf_create_transport -t TCP -q 256
  rpc bdev_rbd_register_cluster main --config-file "$CEPH_CONF" --user admin --config-param rbd_cache=false
  # (v25.09's rpc.py fails on bdev_rbd_create's read-only flag: the call itself, through its client)
  PYTHONPATH=$S/python python3 -c 'import sys; from spdk.rpc.client import JSONRPCClient
JSONRPCClient(sys.argv[1]).call("bdev_rbd_create", {"name": "Rbd0", "pool_name": "rbd", "rbd_name": "bench",
    "block_size": 4096, "cluster_name": "main"})' "$work/spdk.sock" >/dev/null
  rpc nvmf_create_subsystem $nqn -a -s SPDK00000000000001
  rpc nvmf_subsystem_add_ns $nqn Rbd0
  rpc nvmf_subsystem_add_listener $nqn -t tcp -a 127.0.0.1 -s 4421 -f ipv4
  measure spdk $spdk "nvme+tcp://127.0.0.1:4421/$nqn"
else
  echo "== SPDK skipped: no $S/build/bin/nvmf_tgt (bench/spdk/build-spdk.sh builds it)"
fi
