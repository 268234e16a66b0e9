#!/usr/bin/env bash
# Network faults on a single path, from the Linux host: a benchmark, not a test.
#
#   bench/faults-linux.sh [SECONDS]     (default 30 per fault)
#   FAULTS="delay loss" bench/faults-linux.sh 60
#
# Debian 13's kernel (Linux 6.12, a trixie guest in QEMU, test/vm) connects with nvme-cli to our
# target here (the launcher, a RAM namespace, through QEMU's user network) and runs fio in the
# guest: 4 KiB random writes at QD32, every block read back and checked (crc32c, verify_backlog),
# for SECONDS per fault. The faults are tc netem's, in the guest on its link to the target (the
# guest's egress: commands and data the host sends; the target's answers are held back by the
# same loss and reordering only through TCP's acknowledgements): none, a delay of 5 ms +- 2 ms,
# loss of 1%, reordering (25% of packets sent at once, the others 5 ms late), and the link down
# for 10 s in the middle of the run. Prints, per fault, fio's I/Os, its error (the errno of the
# first failure, 84 EILSEQ for a block that failed its check; must be 0), the worst completion
# latency, and what the host's log says of it (I/O timeouts, resets, reconnects). This machine's kernel has no netem; the guest's has.
# FAULTS=control runs the same fio, unfaulted, on a null namespace (reads return zeroes): the
# negative control, whose errors must not be 0.
#
# Needs root, QEMU and the trixie guest image (built on first use, as by the kernel interop
# suite: NVMF_VM_CACHE_TRIXIE, default /var/tmp/nvmf-vm-trixie), and the CLI jar.
set -euo pipefail
SECONDS_PER=${1:-30}
FAULTS=${FAULTS:-"none delay loss reorder down"}
top=$(cd "$(dirname "$0")/.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
JAR=$jar
[ -f "$jar" ] || { echo "build the CLI first: mvn -B -q install -DskipTests"; exit 1; }
. "$top/test/kernel/interop.sh"
. "$top/bench/ours.sh"
TRIXIE=${NVMF_VM_CACHE_TRIXIE:-/var/tmp/nvmf-vm-trixie}
if [ ! -f "$TRIXIE/rootfs.ext4" ]; then
  echo "== building the trixie guest image in $TRIXIE"
  NVMF_VM_CACHE=$TRIXIE "$vm/build-guest.sh" --suite trixie --java
fi
interop_begin faults-linux
trap 'stop_our_target; interop_end' EXIT
NQN=nqn.2026-11.io.nvmeof:faults-linux
P=$(free_port)
cat >"$work/target.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $P, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "namespaces": [{"nsid": 1, "backend": "ram", "size": "256M"},
                 {"nsid": 2, "backend": "null", "size": "256M"}]}]}
JSON
our_target "$work/target.out" --config "$work/target.json"
NVMF_VM_CACHE=$TRIXIE guest_boot "$work/gjob" --timeout 3600 --mem 1024 --gfwd "10.0.2.100:4420=$P" >/dev/null \
  || { echo "the guest did not start"; exit 1; }
gsh "modprobe nvme-tcp && modprobe sch_netem && nvme connect -t tcp -a 10.0.2.100 -s 4420 -n $NQN >/dev/null \
  && . /job/lib.sh && nvme_dev $NQN >/tmp/dev && cat /tmp/dev" >/dev/null || { echo "the Linux host did not connect"; exit 1; }
IF=$(gsh "ip -o route get 10.0.2.100 | sed -n 's/.* dev \([^ ]*\).*/\1/p'")
echo "Linux $(gsh 'uname -r') on $IF to our target, fio randwrite 4 KiB QD32 with verify, $SECONDS_PER s per fault"
printf "%-10s %12s %9s %14s %s\n" fault "I/Os" "fio error" "max lat ms" "host log"
for f in $FAULTS; do
  case $f in
    none|control) qdisc= ;;
    delay) qdisc="delay 5ms 2ms distribution normal" ;;
    loss) qdisc="loss 1%" ;;
    reorder) qdisc="delay 5ms reorder 25% 50%" ;;
    down) qdisc= ;;
    *) echo "unknown fault $f (none delay loss reorder down control)"; exit 1 ;;
  esac
  down=
  [ "$f" = down ] && down="sleep $((SECONDS_PER / 2 - 5)); ip link set $IF down; sleep 10; ip link set $IF up"
  dev='$(cat /tmp/dev)'
  [ "$f" = control ] && dev='$(sed "s/n1$/n2/" /tmp/dev)'   # the null namespace: every check must fail
  out=$(gsh -t $((SECONDS_PER * 4 + 120)) "D=$dev; dmesg -C
    ${qdisc:+tc qdisc replace dev $IF root netem $qdisc}
    fio --name=$f --filename=\$D --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=32 --size=128M \
      --time_based --runtime=$SECONDS_PER --verify=crc32c --verify_backlog=256 --verify_fatal=0 \
      --output-format=json --output=/tmp/$f.json >/dev/null 2>&1 &
    fio=\$!
    $down
    wait \$fio; rc=\$?
    tc qdisc del dev $IF root 2>/dev/null
    echo \"log: \$(dmesg | grep -ciE 'timeout') timeouts, \$(dmesg | grep -ciE 'reconnect') reconnect lines, \$(dmesg | grep -ciE 'reset') reset lines, fio exit \$rc\"
    cat /tmp/$f.json")
  printf '%s\n' "$out" >"$work/$f.out"
  python3 - "$f" "$work/$f.out" <<'PY'
import json, sys
text = open(sys.argv[2]).read()
log = [l for l in text.splitlines() if l.startswith("log: ")]
try:
    j = json.loads(text[text.index("{"):])["jobs"][0]
    ios = j["write"]["total_ios"] + j["read"]["total_ios"]
    mx = max(j["write"]["clat_ns"]["max"], j["read"]["clat_ns"]["max"]) / 1e6
    print("%-10s %12d %9d %14.1f %s" % (sys.argv[1], ios, j["error"], mx, log[0][5:] if log else "?"))
except Exception as e:
    print("%-10s fio gave no result (%s): %s" % (sys.argv[1], e, text[:300].replace("\n", " | ")))
PY
done
gsh "nvme disconnect -n $NQN >/dev/null" >/dev/null || true
