#!/usr/bin/env bash
# Reservations interop (issue: reservations for the software that fences through them):
#   part 1  two hosts on our target: Linux 6.12 (a trixie guest) with nvme-cli's resv-* and
#           util-linux's blkpr, and our initiator's CLI as the second host: blktests nvme/054's
#           sequence and report format, every step of the state machine between the two,
#           preempt-and-abort while the Linux host writes, and a SIGKILL + restart of the target
#           with Persist Through Power Loss on (the reservation is read back as it was)
#   part 2  SPDK's test/nvme/reserve against our target (where SPDK is built: $SPDK_DIR, default
#           /var/tmp/spdk; it needs 2 MiB hugepages, which this part sets up and puts back)
#   part 3  our initiator, as two hosts, against Linux nvmet's reservations (a trixie guest with
#           trixie-backports' kernel: nvmet has them since 6.13)
#   part 4  reservations across the gateways of a gateway group over one RBD image (a one-node
#           Ceph cluster, test/ceph/ceph-cluster.sh; gateways A and B as users start them): Linux
#           6.12 as two hosts (two host NQNs and Host IDs, one controller through each gateway):
#           nvme/054's sequence through A with every report read through A and through B, a
#           conflict at the other gateway, preempt-and-abort while the preempted host writes
#           through B (it stops, and nothing of it lands after), A killed (the reservation holds
#           at B) and restarted, blkpr, release and clear seen from both; SPDK's reserve through
#           each gateway. Needs Ceph's packages (ceph-mon, ceph-osd, rbd).
# Needs root, QEMU, the built jar (mvn -DskipTests package); the guest images are built on first
# use: $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie, with util-linux-extra's blkpr) and
# $NVMF_VM_CACHE_BPO (default /var/tmp/nvmf-vm-trixie-bpo: trixie with the backports kernel, for part 3).
# RESV_PARTS="1 2 3 4" chooses parts.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "reservations interop: build first (mvn -DskipTests package)" >&2; exit 1; }
. "$top/test/kernel/interop.sh"
. "$top/test/kernel/spdk.sh"
TRIXIE=${NVMF_VM_CACHE_TRIXIE:-/var/tmp/nvmf-vm-trixie}
BPO=${NVMF_VM_CACHE_BPO:-/var/tmp/nvmf-vm-trixie-bpo}
SPDK_DIR=${SPDK_DIR:-/var/tmp/spdk}
PARTS=${RESV_PARTS:-1 2 3 4}
if [[ " $PARTS " == *" 1 "* || " $PARTS " == *" 4 "* ]] && [ ! -f "$TRIXIE/rootfs.ext4" ]; then
  echo "== building the trixie guest image in $TRIXIE"
  NVMF_VM_CACHE=$TRIXIE "$vm/build-guest.sh" --suite trixie --java
fi
# blkpr (util-linux-extra) is in the trixie image since it has been built with it; the backports
# image is built for part 3 (Linux nvmet), and for blkpr only where an older trixie image lacks it
BLKPR=$TRIXIE/rootfs/usr/sbin/blkpr
if [[ " $PARTS " == *" 3 "* ]] || [ ! -x "$BLKPR" ]; then
  if [ ! -f "$BPO/rootfs.ext4" ] || [ ! -x "$BPO/rootfs/usr/sbin/blkpr" ]; then
    echo "== building the trixie guest image with the backports kernel and blkpr in $BPO"
    NVMF_VM_CACHE=$BPO NVMF_VM_EXTRA_PKGS=util-linux-extra "$vm/build-guest.sh" --suite trixie --backports-kernel
  fi
  [ -x "$BLKPR" ] || BLKPR=$BPO/rootfs/usr/sbin/blkpr
fi

interop_begin resv
NQN=nqn.2026-11.io.nvmeof:reservations
# the second host: our initiator
HJ=nqn.2026-11.io.nvmeof:java-host
IDJ=6a7b8c9d-0e1f-4a2b-8c3d-4e5f60718293
IDJ_HEX=${IDJ//-/}
J=(-q "$HJ" -I "$IDJ")
head -c 4096 /dev/urandom >"$work/block"
# from here each check records its failure and the run goes on (the verdict is at the end)
set +e
# ours_ok ARGS...: our CLI as host J on $URI succeeds; ours_refused STATUS ARGS...: it fails with STATUS
ours_ok() { local out; out=$(nvmeof "$@" "$URI" "${J[@]}" 2>&1) && echo "   ours: $* -> $out" || { fail "ours: $*: $out"; return 1; }; }
ours_refused() {  # ours_refused STATUS ARGS...: the command fails with that status
  local want=$1 out; shift
  if out=$(nvmeof "$@" "$URI" "${J[@]}" 2>&1); then fail "ours: $* succeeded; expected $want"; return 1; fi
  echo "$out" | grep -q "$want" && echo "   ours: $* -> $want" || { fail "ours: $*: $out (expected $want)"; return 1; }
}

# the report lines blktests' nvme/054 keeps (nvme-cli 2.x): one registrant's entry, the header
entry() { printf 'regctlext[0] :\n  cntlid     : ffff\n  rcsts      : %s\n  rkey       : %s\n' "$1" "$2"; }
head3() { printf 'gen       : %s\nrtype     : %s\nregctl    : %s\n' "$1" "$2" "$3"; }

# ---- part 1: Linux 6.12 and our initiator, two hosts on our target ----
if [[ " $PARTS " == *" 1 "* ]]; then
P=$(free_port)
truncate -s 64M "$work/ns.img"
cat >"$work/target.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $P, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "namespaces": [{"nsid": 1, "backend": "file", "path": "$work/ns.img",
                 "uuid": "3c5e7a90-1b2d-4f6a-8c9e-0a1b2c3d4e5f"}]}]}
JSON
run=0
# start_target: our target as users run it, with a state directory (reservations persist there)
start_target() {
  run=$((run + 1))
  java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/target.json" \
    --state-dir "$work/state" >"$work/target.$run.out" 2>"$work/target.$run.err" &
  tpid=$!
  pids+=($tpid)
  for _ in $(seq 600); do
    grep -q "listening on tcp://127.0.0.1:$P" "$work/target.$run.out" 2>/dev/null && return 0
    kill -0 $tpid 2>/dev/null || break
    sleep 0.1
  done
  echo "our target did not start:"; cat "$work/target.$run.err"; return 1
}
start_target
URI="nvme+tcp://127.0.0.1:$P/$NQN"
mkdir -p "$work/share"
cp "$BLKPR" "$work/share/"
echo "== our target on 127.0.0.1:$P (a 64 MiB file, PTPL kept in its state directory); booting Linux 6.12"
NVMF_VM_CACHE=$TRIXIE guest_boot "$work/gjob" --timeout 1800 --mem 1024 --share "$work/share" \
  --gfwd "10.0.2.100:4420=$P" || exit 1
gsh "modprobe nvme-tcp && nvme connect -t tcp -a 10.0.2.100 -s 4420 -n $NQN --ctrl-loss-tmo=-1 --reconnect-delay=1 \
  >/dev/null && . /job/lib.sh && nvme_dev $NQN >/tmp/dev && cat /tmp/dev && cat /etc/nvme/hostid" >"$work/connect.txt" \
  || { cat "$work/connect.txt"; fail "the Linux host did not connect"; exit 1; }
DEV=$(sed -n 1p "$work/connect.txt")
IDG_HEX=$(sed -n 2p "$work/connect.txt" | tr -d '-')
echo "   Linux host: $DEV, host ID $IDG_HEX"
gsh "nvme id-ns $DEV | grep -E '^(rescap|nmic)'; nvme id-ctrl $DEV | grep -E '^(oncs|ctratt)'"

echo "== blktests nvme/054's sequence with nvme-cli $(sed -n 's/.*nvme version \([0-9.]*\).*/\1/p' "$work/gjob/out.log" | head -1)"
cat >"$work/share/054.sh" <<'SH'
DEV=$(cat /tmp/dev)
resv_report() { nvme resv-report "$DEV" --eds | grep -v hostid | grep -E "gen|rtype|regctl|regctlext|cntlid|rcsts|rkey"; }
echo Register; resv_report; nvme resv-register "$DEV" --nrkey=4 --rrega=0; resv_report
echo Replace; nvme resv-register "$DEV" --crkey=4 --nrkey=5 --rrega=2; resv_report
echo Unregister; nvme resv-register "$DEV" --crkey=5 --rrega=1; resv_report
echo Acquire; nvme resv-register "$DEV" --nrkey=4 --rrega=0; nvme resv-acquire "$DEV" --crkey=4 --rtype=1 --racqa=0; resv_report
echo Preempt; nvme resv-acquire "$DEV" --crkey=4 --prkey=4 --rtype=2 --racqa=1; resv_report
echo Release; nvme resv-release "$DEV" --crkey=4 --rtype=2 --rrela=0; resv_report
echo Clear; nvme resv-acquire "$DEV" --crkey=4 --rtype=1 --racqa=0; resv_report
nvme resv-release "$DEV" --crkey=4 --rrela=1
SH
# what nvme/054 expects of nvme-cli 2.x (the report lines it keeps, and each command's success line)
{
  echo Register; head3 0 0 0; echo "NVME Reservation  success"; head3 1 0 1; entry 0 4
  echo Replace; echo "NVME Reservation  success"; head3 2 0 1; entry 0 5
  echo Unregister; echo "NVME Reservation  success"; head3 3 0 0
  echo Acquire; echo "NVME Reservation  success"; echo "NVME Reservation Acquire success"; head3 4 1 1; entry 1 4
  echo Preempt; echo "NVME Reservation Acquire success"; head3 5 2 1; entry 1 4
  echo Release; echo "NVME Reservation Release success"; head3 5 0 1; entry 0 4
  echo Clear; echo "NVME Reservation Acquire success"; head3 5 1 1; entry 1 4; echo "NVME Reservation Release success"
} >"$work/054.expected"
gsh "bash /mnt/share/054.sh" >"$work/054.out" || true
sed 's/^/   /' "$work/054.out"
if diff -u "$work/054.expected" "$work/054.out"; then check "nvme/054's sequence: every report as 054.out has it"
else fail "nvme/054's sequence differs from 054.out (above)"; fi

echo "== two hosts: Linux ($IDG_HEX) and our initiator ($IDJ_HEX)"
report() { gsh "nvme resv-report \$(cat /tmp/dev) --eds"; }
gsh 'DEV=$(cat /tmp/dev); nvme resv-register $DEV --nrkey=0x1 --rrega=0 --cptpl=3 && nvme resv-acquire $DEV --crkey=0x1 --rtype=1 --racqa=0' \
  || fail "Linux: register with PTPL, acquire Write Exclusive"
ours_ok resv-register --nrkey 0x2
ours_refused "Reservation Conflict" write -o 0 -d "$work/block"
ours_ok read -o 0 -l 4096 -d "$work/read.out"
ours_refused "Reservation Conflict" resv-acquire --crkey 0x2 --rtype 1
r=$(report) || true; echo "$r" | sed 's/^/   /'
echo "$r" | grep -q "regctl    : 2" && echo "$r" | grep -q "ptpls     : 1" && echo "$r" | grep -q "hostid     : $IDJ_HEX" \
  && echo "$r" | grep -q "hostid     : $IDG_HEX" && check "two registrants, PTPL on, each by its own 128-bit host ID" \
  || fail "the report after both registered"

echo "== fencing: our host preempts Linux with abort while Linux writes"
gsh 'DEV=$(cat /tmp/dev); setsid bash -c "i=0; while dd if=/dev/urandom of=$DEV bs=4k count=64 seek=\$((i % 256 * 64)) oflag=direct status=none; do i=\$((i + 1)); done; echo \$i >/tmp/writer.done" >/tmp/writer.log 2>&1 </dev/null & sleep 2; [ ! -e /tmp/writer.done ]' \
  && check "Linux writes (a dd loop, direct I/O)" || fail "the Linux writer did not run"
ours_ok resv-acquire --crkey 0x2 --prkey 0x1 --rtype 2 --racqa 2
if gsh -t 60 'for i in $(seq 300); do [ -e /tmp/writer.done ] && break; sleep 0.1; done; cat /tmp/writer.done /tmp/writer.log'; then
  check "Linux's writer stopped at the preemption"
else fail "Linux's writes went on after preempt-and-abort"; fi
gsh 'dmesg | grep -i -E "reservation|nexus" | tail -3' || true
gsh 'dd if=$(cat /tmp/dev) of=/dev/null bs=4k count=1 iflag=direct' && fail "Linux read under our Exclusive Access" \
  || check "Linux can no longer read (Exclusive Access held by our host)"
r=$(report) || true; echo "$r" | sed 's/^/   /'
echo "$r" | grep -q "rtype     : 2" && echo "$r" | grep -q "regctl    : 1" && echo "$r" | grep -q "hostid     : $IDJ_HEX" \
  && ! echo "$r" | grep -q "hostid     : $IDG_HEX" && check "Linux preempted: our host alone, holding Exclusive Access" \
  || fail "the report after the preemption"
before=$(echo "$r" | grep -v "^$")

echo "== SIGKILL of our target, and a restart: PTPL"
kill -KILL $tpid; wait $tpid 2>/dev/null || true
start_target
if gsh -t 120 'for i in $(seq 600); do nvme list-subsys 2>/dev/null | grep -q live && break; sleep 0.2; done; nvme list-subsys | grep -q live'; then
  r=$(report) || true
  after=$(echo "$r" | grep -v "^$")
  [ "$before" = "$after" ] && check "after the crash the reservation is as it was (generation, type, registrant, key, PTPL)" \
    || { fail "the reservation changed across the restart"; diff <(echo "$before") <(echo "$after") || true; }
else fail "Linux did not reconnect after the restart"; fi
ours_ok resv-release --crkey 0x2 --rrela 1
gsh '. /job/lib.sh; io_check $(cat /tmp/dev)' >/dev/null && check "cleared: Linux writes and reads again" \
  || fail "Linux I/O after the clear"

echo "== util-linux blkpr on Linux (the block layer's pr_ops)"
B=/mnt/share/blkpr
gsh "$B -c register -k 0x3 \$(cat /tmp/dev) && $B -c reserve -k 0x3 -t exclusive-access \$(cat /tmp/dev)" \
  && check "blkpr register, reserve exclusive-access" || fail "blkpr register/reserve"
r=$(report) || true
echo "$r" | grep -q "rtype     : 2" && echo "$r" | grep -q "rkey       : 3" && check "the report shows blkpr's reservation" \
  || fail "blkpr's reservation not in the report: $r"
ours_refused "Reservation Conflict" write -o 0 -d "$work/block"
ours_ok resv-register --nrkey 0x4
gsh "$B -c preempt -K 0x3 -k 0x4 -t exclusive-access \$(cat /tmp/dev)" && check "blkpr preempt (our host's registration)" \
  || fail "blkpr preempt"
r=$(report) || true
echo "$r" | grep -q "regctl    : 1" && ! echo "$r" | grep -q "hostid     : $IDJ_HEX" && check "our host was preempted by blkpr" \
  || fail "after blkpr preempt: $r"
gsh "$B -c release -k 0x3 -t exclusive-access \$(cat /tmp/dev) && $B -c clear -k 0x3 \$(cat /tmp/dev)" \
  && check "blkpr release, clear" || fail "blkpr release/clear"
r=$(report) || true
echo "$r" | grep -q "regctl    : 0" && check "nothing registered after blkpr clear" || fail "after blkpr clear: $r"
gsh "nvme disconnect -n $NQN" >/dev/null || true
guest_stop "$work/gjob"
grep -h "LEAK:" "$work"/target.*.err && fail "our target reported leaked buffers" || true
kill -TERM $tpid 2>/dev/null || true; wait $tpid 2>/dev/null || true
fi

# ---- part 2: SPDK's reservation test program against our target ----
if [[ " $PARTS " == *" 2 "* ]]; then
if [ -x "$SPDK_DIR/test/nvme/reserve/reserve" ]; then
  echo "== SPDK's test/nvme/reserve against our target"
  P2=$(free_port)
  cat >"$work/spdk.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": $P2, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "namespaces": [{"nsid": 1, "backend": "ram", "size": "64M"}]}]}
JSON
  java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/spdk.json" \
    >"$work/t2.out" 2>"$work/t2.err" &
  t2=$!; pids+=($t2)
  for _ in $(seq 600); do grep -q "listening on tcp://127.0.0.1:$P2" "$work/t2.out" 2>/dev/null && break; sleep 0.1; done
  rc=0
  spdk_run "$work/reserve.out" "$SPDK_DIR/test/nvme/reserve/reserve" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$P2 subnqn:$NQN" || rc=$?
  sed 's/^/   /' "$work/reserve.out"
  if [ $rc = 0 ] && grep -q "Reservations: *Supported" "$work/reserve.out" && ! grep -q "Failed" "$work/reserve.out" \
     && grep -q "Using 128-bit extended host identifier" "$work/reserve.out"; then
    check "SPDK's reserve: register, acquire, release, unregister and report pass against our target"
  else fail "SPDK's reserve (exit $rc)"; fi
  kill -TERM $t2 2>/dev/null || true; wait $t2 2>/dev/null || true
  grep -q "LEAK:" "$work/t2.err" && fail "our target reported leaked buffers" || true
else
  echo "== part 2 SKIPPED: no SPDK build at $SPDK_DIR (bench/spdk/build-spdk.sh builds one)"
fi
fi

# ---- part 3: our initiator, as two hosts, against Linux nvmet's reservations ----
if [[ " $PARTS " == *" 3 "* ]]; then
P3=$(free_port)
echo "== Linux nvmet with reservations (trixie-backports' kernel)"
NVMF_VM_CACHE=$BPO guest_boot "$work/njob" --timeout 900 --mem 1024 --fwd "tcp:127.0.0.1:$P3-:4420" || exit 1
gsh "modprobe -a nvmet nvmet-tcp && truncate -s 64M /tmp/ns.img && d=/sys/kernel/config/nvmet/subsystems/$NQN \
  && mkdir -p \$d/namespaces/1 && echo 1 >\$d/attr_allow_any_host && echo -n /tmp/ns.img >\$d/namespaces/1/device_path \
  && echo 1 >\$d/namespaces/1/resv_enable && echo 1 >\$d/namespaces/1/enable && . /job/lib.sh \
  && nvmet_port 1 tcp 0.0.0.0 4420 $NQN && cat \$d/namespaces/1/resv_enable" || { fail "nvmet with resv_enable"; }
for _ in $(seq 100); do python3 "$vm/tools/nvme-tcp-icreq.py" 127.0.0.1 "$P3" >/dev/null 2>&1 && break; sleep 0.2; done
URI="nvme+tcp://127.0.0.1:$P3/$NQN"
HK=nqn.2026-11.io.nvmeof:java-host-k
IDK=1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9
K=(-q "$HK" -I "$IDK")
theirs_ok() { local out; out=$(nvmeof "$@" "$URI" "${K[@]}" 2>&1) && echo "   host K: $* -> $out" || { fail "host K: $*: $out"; return 1; }; }
ours_ok resv-register --nrkey 0x2
theirs_ok resv-register --nrkey 0xb
ours_ok resv-acquire --crkey 0x2 --rtype 1
ours_ok write -o 0 -d "$work/block"
if out=$(nvmeof write "$URI" "${K[@]}" -o 0 -d "$work/block" 2>&1); then fail "nvmet let host K write under our Write Exclusive"
else echo "$out" | grep -q "Reservation Conflict" && check "nvmet refuses host K's write: Reservation Conflict" \
  || fail "host K's write: $out"; fi
r=$(nvmeof resv-report "$URI" "${K[@]}" 2>&1) || fail "resv-report: $r"
echo "$r" | sed 's/^/   /'
echo "$r" | grep -q "rtype     : 1" && echo "$r" | grep -q "regctl    : 2" && echo "$r" | grep -q "hostid     : $IDJ_HEX" \
  && echo "$r" | grep -q "hostid     : ${IDK//-/}" && check "our report of nvmet's reservation: type 1, both hosts by host ID" \
  || fail "our report of nvmet's reservation"
theirs_ok resv-acquire --crkey 0xb --prkey 0x2 --rtype 2 --racqa 2
ours_refused "Reservation Conflict" read -o 0 -l 4096 -d "$work/read.out"
r=$(nvmeof resv-report "$URI" "${K[@]}" 2>&1) || true
echo "$r" | grep -q "rtype     : 2" && echo "$r" | grep -q "regctl    : 1" && check "host K preempted us with abort on nvmet" \
  || fail "after preempt-and-abort on nvmet: $r"
theirs_ok resv-release --crkey 0xb --rrela 1
ours_ok write -o 0 -d "$work/block"
guest_stop "$work/njob"
fi

# ---- part 4: two Linux host identities through two gateways of a gateway group ----
if [[ " $PARTS " == *" 4 "* ]]; then
if ! command -v ceph-mon >/dev/null || ! command -v rbd >/dev/null; then
  echo "== part 4 SKIPPED: no Ceph here (apt-get install ceph-mon ceph-osd ceph-common)"
else
NQN4=nqn.2026-12.io.nvmeof:gateway-reservations
"$top/test/ceph/ceph-cluster.sh" start "$work/ceph" >"$work/ceph.env" || { fail "the Ceph cluster did not start"; exit 1; }
. "$work/ceph.env"
stop_ceph() { "$top/test/ceph/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true; }
trap 'stop_ceph; interop_end' EXIT
rbd --conf "$CEPH_CONF" create --size 64M rbd/resv
PA=$(free_port) PB=$(free_port)
# the launcher's defaults: reservation sharing among them
. "$top/test/kernel/gateways.sh"
NQN=$NQN4 GW_GROUP=resv GW_IMAGE=resv GW_SERIAL=GWRESV1 GW_ADDR_A=127.0.0.1:$PA GW_ADDR_B=127.0.0.1:$PB
group_gateway_config a 127.0.0.1 "$PA" 1 999 >"$work/a.json"
group_gateway_config b 127.0.0.1 "$PB" 1000 1999 >"$work/b.json"
gw_listen[A]=127.0.0.1:$PA gw_listen[B]=127.0.0.1:$PB
start_gateway A || exit 1
io "$(sock A)" wait-role 60 owner "$(date +%s.%N)" >/dev/null || fail "gateway A did not take its group"
start_gateway B || exit 1
grep -h "shared with the other gateways" "$work"/a.1.err "$work"/b.1.err | sed 's/^/   /'
H1=nqn.2026-12.io.nvmeof:linux-host-1 I1=0f1e2d3c-4b5a-4697-8877-665544332211
H2=nqn.2026-12.io.nvmeof:linux-host-2 I2=a1b2c3d4-e5f6-4789-8abc-def012345678
mkdir -p "$work/share4"
cp "$BLKPR" "$work/share4/" 2>/dev/null || true
echo "== gateways A (127.0.0.1:$PA, owner) and B (127.0.0.1:$PB) over rbd/resv; booting Linux 6.12"
NVMF_VM_CACHE=$TRIXIE guest_boot "$work/g4job" --timeout 2400 --mem 1024 --share "$work/share4" \
  --gfwd "10.0.2.100:4420=$PA" --gfwd "10.0.2.101:4420=$PB" || exit 1
# host 1 through A, host 2 through B; /tmp/c1 and /tmp/c2 name their controllers' character
# devices (nvme-cli sends each command through that controller, so under that host's identity)
gsh "modprobe nvme-tcp && nvme connect -t tcp -a 10.0.2.100 -s 4420 -n $NQN4 --hostnqn $H1 --hostid $I1 \
  --ctrl-loss-tmo=-1 --reconnect-delay=1 >/dev/null && nvme connect -t tcp -a 10.0.2.101 -s 4420 -n $NQN4 \
  --hostnqn $H2 --hostid $I2 --ctrl-loss-tmo=-1 --reconnect-delay=1 >/dev/null && for c in /sys/class/nvme/nvme*; do
    case \$(cat \$c/address) in *traddr=10.0.2.100*) echo /dev/\${c##*/} >/tmp/c1 ;; *traddr=10.0.2.101*) echo /dev/\${c##*/} >/tmp/c2 ;; esac
  done && . /job/lib.sh && nvme_dev $NQN4 >/tmp/dev && echo \$(cat /tmp/c1) \$(cat /tmp/c2) \$(cat /tmp/dev) \
  \$(cat /sys/block/\$(basename \$(cat /tmp/dev))/queue/logical_block_size)" >"$work/connect4.txt" \
  || { cat "$work/connect4.txt"; fail "Linux did not connect through both gateways"; exit 1; }
read -r C1 C2 DEV4 LBS <"$work/connect4.txt"
echo "   host 1 ($H1) through A: $C1; host 2 ($H2) through B: $C2; the multipath device $DEV4 ($LBS-byte blocks)"
gsh "nvme list-subsys $DEV4; nvme id-ns $C1 -n 1 | grep -E '^(rescap|nmic)'; nvme id-ctrl $C2 | grep -E '^oncs'"
I1_HEX=${I1//-/} I2_HEX=${I2//-/}
cat >"$work/share4/lib4.sh" <<SH
C1=\$(cat /tmp/c1) C2=\$(cat /tmp/c2) LBS=$LBS
# report_via CTRL: the report with the extended data structure, through that controller
report_via() { nvme resv-report "\$1" -n 1 --eds; }
# write_via CTRL LBA FILE: one 4 KiB write through that controller
write_via() { nvme write "\$1" -n 1 -s "\$2" -c \$((4096 / LBS - 1)) -z 4096 -d "\$3" >/dev/null 2>&1; }
SH
cat >"$work/share4/054.sh" <<'SH'
. /mnt/share/lib4.sh
# nvme/054's sequence as host 1 through A; each report read through $REPORT (A's or B's controller)
REPORT=$(cat /tmp/c$1)
DEV=$C1
resv_report() { report_via "$REPORT" | grep -v hostid | grep -E "gen|rtype|regctl|regctlext|cntlid|rcsts|rkey"; }
echo Register; resv_report; nvme resv-register "$DEV" -n 1 --nrkey=4 --rrega=0; resv_report
echo Replace; nvme resv-register "$DEV" -n 1 --crkey=4 --nrkey=5 --rrega=2; resv_report
echo Unregister; nvme resv-register "$DEV" -n 1 --crkey=5 --rrega=1; resv_report
echo Acquire; nvme resv-register "$DEV" -n 1 --nrkey=4 --rrega=0; nvme resv-acquire "$DEV" -n 1 --crkey=4 --rtype=1 --racqa=0; resv_report
echo Preempt; nvme resv-acquire "$DEV" -n 1 --crkey=4 --prkey=4 --rtype=2 --racqa=1; resv_report
echo Release; nvme resv-release "$DEV" -n 1 --crkey=4 --rtype=2 --rrela=0; resv_report
echo Clear; nvme resv-acquire "$DEV" -n 1 --crkey=4 --rtype=1 --racqa=0; resv_report
nvme resv-release "$DEV" -n 1 --crkey=4 --rrela=1
SH
for via in 1 2; do
  name=$([ $via = 1 ] && echo A || echo B)
  echo "== nvme/054's sequence, host 1 through A, every report read through $name"
  # a new generation each round: the expected counts start from this round's first report
  gsh "bash /mnt/share/054.sh $via" >"$work/054.$via.out" || true
  g0=$(sed -n '2s/^gen *: *//p' "$work/054.$via.out")
  sed 's/^/   /' "$work/054.$via.out"
  gen() { echo $((g0 + $1)); }
  {
    echo Register; head3 "$(gen 0)" 0 0; echo "NVME Reservation  success"; head3 "$(gen 1)" 0 1; entry 0 4
    echo Replace; echo "NVME Reservation  success"; head3 "$(gen 2)" 0 1; entry 0 5
    echo Unregister; echo "NVME Reservation  success"; head3 "$(gen 3)" 0 0
    echo Acquire; echo "NVME Reservation  success"; echo "NVME Reservation Acquire success"; head3 "$(gen 4)" 1 1; entry 1 4
    echo Preempt; echo "NVME Reservation Acquire success"; head3 "$(gen 5)" 2 1; entry 1 4
    echo Release; echo "NVME Reservation Release success"; head3 "$(gen 5)" 0 1; entry 0 4
    echo Clear; echo "NVME Reservation Acquire success"; head3 "$(gen 5)" 1 1; entry 1 4; echo "NVME Reservation Release success"
  } >"$work/054.$via.expected"
  if diff -u "$work/054.$via.expected" "$work/054.$via.out"; then check "nvme/054's sequence through A, reported through $name, as 054.out has it"
  else fail "nvme/054's sequence reported through $name differs (above)"; fi
done

rep() { gsh ". /mnt/share/lib4.sh; report_via \$C$1"; }   # rep 1|2: the report through A (host 1) or B (host 2)
echo "== two hosts, two gateways: host 1 holds Write Exclusive through A; host 2 is refused through B"
gsh '. /mnt/share/lib4.sh; head -c 4096 /dev/urandom >/tmp/blk; nvme resv-register $C1 -n 1 --nrkey=0x1 --rrega=0 \
  && nvme resv-acquire $C1 -n 1 --crkey=0x1 --rtype=1 --racqa=0 && nvme resv-register $C2 -n 1 --nrkey=0x2 --rrega=0' \
  && check "host 1 registered and acquired Write Exclusive through A; host 2 registered through B" || fail "register/acquire"
gsh '. /mnt/share/lib4.sh; out=$(nvme write $C2 -n 1 -s 0 -c $((4096 / LBS - 1)) -z 4096 -d /tmp/blk 2>&1); echo "$out"; echo "$out" | grep -qi "reservation conflict"' \
  && check "host 2's write through B: Reservation Conflict" || fail "host 2 wrote through B under host 1's Write Exclusive"
gsh '. /mnt/share/lib4.sh; ! nvme resv-acquire $C2 -n 1 --crkey=0x2 --rtype=1 --racqa=0' \
  && check "host 2's Acquire through B: refused (host 1 holds it)" || fail "host 2 acquired through B"
ra=$(rep 1); rb=$(rep 2)
echo "$rb" | sed 's/^/   B: /'
for r in "$ra" "$rb"; do
  echo "$r" | grep -q "rtype     : 1" && echo "$r" | grep -q "regctl    : 2" && echo "$r" | grep -q "hostid     : $I1_HEX" \
    && echo "$r" | grep -q "hostid     : $I2_HEX" || { fail "a report after both registered: $r"; break; }
done
[ "$ra" = "$rb" ] && check "the reports through A and through B are the same: type 1, two registrants by 128-bit host ID" \
  || fail "the reports through A and B differ"

echo "== preempt-and-abort while host 2 writes through B"
gsh '. /mnt/share/lib4.sh; nvme resv-release $C1 -n 1 --crkey=0x1 --rtype=1 --rrela=0 && nvme resv-acquire $C1 -n 1 --crkey=0x1 --rtype=3 --racqa=0' \
  && check "host 1 holds Write Exclusive - Registrants Only: host 2, a registrant, may write" || fail "acquire type 3"
# four writers through B, each on its own 4 KiB blocks, each write a new stamp (writer, count)
cat >"$work/share4/writer.sh" <<'SH'
. /mnt/share/lib4.sh
w=$1 i=0
while :; do
  i=$((i + 1))
  printf "%-4096s" "writer $w stamp $i" >/tmp/s$w
  write_via "$C2" $(((w * 64 + i % 16) * 4096 / LBS)) /tmp/s$w || break
  echo $i >/tmp/w$w.ok
done
echo $i >/tmp/w$w.done
SH
gsh 'rm -f /tmp/w*.done /tmp/w*.ok; for w in 1 2 3 4; do setsid bash /mnt/share/writer.sh $w </dev/null >/dev/null 2>&1 & done
  sleep 3; cat /tmp/w*.ok; [ $(ls /tmp/w*.ok | wc -l) = 4 ]' \
  && check "host 2 writes through B (4 writers)" || fail "host 2's writers did not run"
gsh '. /mnt/share/lib4.sh; nvme resv-acquire $C1 -n 1 --crkey=0x1 --prkey=0x2 --rtype=1 --racqa=2 \
  && for w in 1 2 3 4; do dd if=$(cat /tmp/dev) bs=4096 skip=$((w * 64)) count=16 iflag=direct status=none; done | md5sum >/tmp/after.md5' \
  && check "host 1 preempted and aborted host 2 through A" || fail "preempt-and-abort through A"
if gsh -t 120 'for i in $(seq 600); do [ $(ls /tmp/w*.done 2>/dev/null | wc -l) = 4 ] && break; sleep 0.1; done; cat /tmp/w*.done; [ $(ls /tmp/w*.done | wc -l) = 4 ]'; then
  check "host 2's four writers through B stopped at the preemption"
else fail "host 2's writes through B went on after preempt-and-abort"; fi
gsh 'sleep 2; for w in 1 2 3 4; do dd if=$(cat /tmp/dev) bs=4096 skip=$((w * 64)) count=16 iflag=direct status=none; done | md5sum | diff - /tmp/after.md5' \
  && check "nothing of host 2's landed after the preempt-and-abort completed (host 2's blocks read the same then and later)" \
  || fail "host 2's blocks changed after the preempt-and-abort completed"
# the holder preempted a registrant: that one goes, the reservation stays as it was (type 3)
r=$(rep 2)
echo "$r" | grep -q "rtype     : 3" && echo "$r" | grep -q "regctl    : 1" && ! echo "$r" | grep -q "hostid     : $I2_HEX" \
  && check "through B: host 1 alone, holding Write Exclusive - Registrants Only" || fail "the report through B after the preemption: $r"

echo "== gateway A (host 1's) killed: the reservation holds at B"
kill_gateway A
io "$(sock B)" wait-role 60 owner "$(now)" >/dev/null || fail "B did not take over A's group"
gsh '. /mnt/share/lib4.sh; ! write_via $C2 0 /tmp/blk' \
  && check "with A dead, host 2 (no longer a registrant) is still refused a write through B" || fail "after A died, through B"
r=$(rep 2)
echo "$r" | grep -q "rtype     : 3" && echo "$r" | grep -q "regctl    : 1" && echo "$r" | grep -q "hostid     : $I1_HEX" \
  && check "through B: host 1 still holds the reservation" || fail "the report through B with A dead: $r"
start_gateway A || fail "gateway A did not restart"
if gsh -t 120 'for i in $(seq 600); do [ "$(cat /sys/class/nvme/$(basename $(cat /tmp/c1))/state)" = live ] && break; sleep 0.2; done; . /mnt/share/lib4.sh; report_via $C1' >"$work/ra.txt"; then
  [ "$(cat "$work/ra.txt")" = "$(rep 2)" ] && check "A restarted: host 1 reconnected, and its report through A is B's" \
    || fail "after A's restart the reports differ: $(cat "$work/ra.txt")"
else fail "host 1 did not reconnect to the restarted A"; fi

echo "== release and clear, seen from both"
gsh '. /mnt/share/lib4.sh; nvme resv-release $C1 -n 1 --crkey=0x1 --rtype=3 --rrela=0 && write_via $C2 0 /tmp/blk' \
  && check "host 1 released through A: host 2 writes through B" || fail "release"
gsh '. /mnt/share/lib4.sh; nvme resv-register $C2 -n 1 --nrkey=0x2 --rrega=0 && nvme resv-release $C2 -n 1 --crkey=0x2 --rrela=1' \
  && check "host 2 registered and cleared through B" || fail "clear"
ra=$(rep 1); rb=$(rep 2)
[ "$ra" = "$rb" ] && echo "$ra" | grep -q "regctl    : 0" && check "through A and B: nothing registered" \
  || fail "after the clear: A: $ra B: $rb"

if [ -x "$work/share4/blkpr" ]; then
  echo "== util-linux blkpr on the multipath device (host 1, through A, the optimized path once A has its group back)"
  io "$(sock A)" wait-role 120 owner "$(now)" >/dev/null || fail "A did not take its group back"
  gsh -t 120 "for i in \$(seq 600); do nvme list-subsys $DEV4 | grep -q '10.0.2.100.* live optimized' && break; sleep 0.2; done
    nvme list-subsys $DEV4 | grep '10.0.2.100.* live optimized'" || fail "Linux does not see A optimized again"
  Bk=/mnt/share/blkpr
  gsh "$Bk -c register -k 0x3 $DEV4 && $Bk -c reserve -k 0x3 -t exclusive-access $DEV4" \
    && check "blkpr register, reserve exclusive-access" || fail "blkpr register/reserve"
  r=$(rep 2)
  echo "$r" | grep -q "rtype     : 2" && echo "$r" | grep -q "rkey       : 3" && echo "$r" | grep -q "hostid     : $I1_HEX" \
    && check "through B the report shows blkpr's reservation, by host 1" \
    || fail "blkpr's reservation not in B's report: $r"
  gsh '. /mnt/share/lib4.sh; ! write_via $C2 0 /tmp/blk' && check "host 2's write through B: refused" || fail "host 2 wrote under blkpr's reservation"
  gsh "$Bk -c release -k 0x3 -t exclusive-access $DEV4 && $Bk -c clear -k 0x3 $DEV4" && check "blkpr release, clear" \
    || fail "blkpr release/clear"
  r=$(rep 2)
  echo "$r" | grep -q "regctl    : 0" && check "through B: nothing registered after blkpr clear" || fail "after blkpr clear: $r"
else
  echo "== blkpr SKIPPED: not in $BLKPR (the trixie guest images bring it)"
fi
gsh "nvme disconnect -n $NQN4" >/dev/null || true
guest_stop "$work/g4job"

if [ -x "$SPDK_DIR/test/nvme/reserve/reserve" ]; then
  for g in A B; do
    port=$([ $g = A ] && echo "$PA" || echo "$PB")
    echo "== SPDK's test/nvme/reserve through gateway $g"
    rc=0
    spdk_run "$work/reserve.$g.out" "$SPDK_DIR/test/nvme/reserve/reserve" \
      -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN4" || rc=$?
    sed 's/^/   /' "$work/reserve.$g.out"
    if [ $rc = 0 ] && grep -q "Reservations: *Supported" "$work/reserve.$g.out" && ! grep -q "Failed" "$work/reserve.$g.out"; then
      check "SPDK's reserve passes through gateway $g"
    else fail "SPDK's reserve through gateway $g (exit $rc)"; fi
  done
else
  echo "== SPDK's reserve SKIPPED: no SPDK build at $SPDK_DIR (bench/spdk/build-spdk.sh builds one)"
fi
stop_gateways
stop_ceph
fi
fi

[ $status = 0 ] && echo "reservations interop: PASS" || echo "reservations interop: FAILED"
exit $status
