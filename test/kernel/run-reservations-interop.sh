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
# Needs root, QEMU, the built jar (mvn -DskipTests package); the guest images are built on first
# use: $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie) and $NVMF_VM_CACHE_BPO (default
# /var/tmp/nvmf-vm-trixie-bpo: trixie with the backports kernel and util-linux-extra, for blkpr).
# RESV_PARTS="1 2 3" chooses parts.
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
PARTS=${RESV_PARTS:-1 2 3}
if [[ " $PARTS " == *" 1 "* ]] && [ ! -f "$TRIXIE/rootfs.ext4" ]; then
  echo "== building the trixie guest image in $TRIXIE"
  NVMF_VM_CACHE=$TRIXIE "$vm/build-guest.sh" --suite trixie --java
fi
if [ ! -f "$BPO/rootfs.ext4" ] || [ ! -x "$BPO/rootfs/usr/sbin/blkpr" ]; then
  echo "== building the trixie guest image with the backports kernel and blkpr in $BPO"
  NVMF_VM_CACHE=$BPO NVMF_VM_EXTRA_PKGS=util-linux-extra "$vm/build-guest.sh" --suite trixie --backports-kernel
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
cp "$BPO/rootfs/usr/sbin/blkpr" "$work/share/"
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
entry() { printf 'regctlext[0] :\n  cntlid     : ffff\n  rcsts      : %s\n  rkey       : %s\n' "$1" "$2"; }
head3() { printf 'gen       : %s\nrtype     : %s\nregctl    : %s\n' "$1" "$2" "$3"; }
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

[ $status = 0 ] && echo "reservations interop: PASS" || echo "reservations interop: FAILED"
exit $status
