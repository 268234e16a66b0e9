#!/bin/bash
# Runs inside the trixie guest: the kernel's NVMe/TCP host with TLS 1.3 (tlshd does the
# handshake, the PSK comes from the kernel keyring) against our target (/mnt/share/nvmeof.jar,
# run here) on a TLS-required port at 127.0.0.1:4420, subsystem $NQN. The kernel's key is what
# `nvme gen-tls-key` derives from $SECRET for $HOST1 (nvme-cli 2.13: libnvme's older HKDF
# labels); our target has only the interchange key. mkfs/mount/verify over TLS, TLS and
# DH-HMAC-CHAP together, and a host in the clear refused. (Our target runs in the guest because
# Linux 6.12's TLS host sends nothing through QEMU's user-mode network forwarding, while
# userspace TLS clients and NVMe/TCP in the clear pass it; on loopback it works, as kernel to
# kernel does.)
set -u
. /job/lib.sh
NQN=${NQN:?} HOST1=${HOST1:?} SECRET=${SECRET:?} KEY1=${KEY1:?} PSK=${PSK:?}
TADDR=127.0.0.1 JAR=/mnt/share/nvmeof.jar PIN="taskset -c 0"
HOSTB=${HOST1%?}b   # the same host NQN but its last digit: TLS and DH-HMAC-CHAP together
rc=0
check() { echo "check: $*"; }
fail() { echo "FAILED: $*"; rc=1; }
phase "modprobe" modprobe -a nvme-tcp tls || exit 1
umask 077
echo "$PSK" >/tmp/host1.psk
# connect_timeout_ms: the first TLS handshake and DH-HMAC-CHAP of two cold JVMs on one emulated
# vCPU can outlast the 10 s default meant for real machines (the host side waits 120 s below)
cat >/tmp/target.json <<JSON
{"settings": {"connect_timeout_ms": 120000},
 "ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 4420, "tls": "required", "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "allowed_hosts": ["$HOST1", "$HOSTB"],
                 "namespaces": [{"nsid": 1, "backend": "ram", "size": "256M"}]}],
 "hosts": [{"nqn": "$HOST1", "tls_key_file": "/tmp/host1.psk"},
           {"nqn": "$HOSTB", "dhchap_key": "$KEY1", "tls_key_file": "/tmp/host1.psk"}]}
JSON
umask 022
$PIN java -Xmx512m -XX:TieredStopAtLevel=1 -Dio.netty.leakDetection.level=paranoid -jar "$JAR" target \
  --config /tmp/target.json >/tmp/target.out 2>/tmp/target.err &
tpid=$!
for _ in $(seq 600); do grep -q "listening on tcp" /tmp/target.out 2>/dev/null && break; kill -0 $tpid 2>/dev/null || break; sleep 0.2; done
grep -q "listening on tcp" /tmp/target.out || { echo "our target did not start:"; cat /tmp/target.err; exit 1; }
cat /tmp/target.out
# our own initiator first, over TLS with DH-HMAC-CHAP (this also warms the target's JVM up)
echo "$KEY1" >/tmp/host1.key; chmod 600 /tmp/host1.key
head -c 1048576 /dev/urandom >/tmp/p1
ours() { timeout 300 $PIN java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$JAR" "$@"; }
uri="nvme+tcp://127.0.0.1:4420/$NQN"
# the first TLS handshake of two cold JVMs sharing one emulated vCPU can take longer than the
# 10 s connect deadline meant for real machines
if ours write "$uri" -o 0 -d /tmp/p1 -q "$HOSTB" --tls-key-file /tmp/host1.psk --dhchap-secret-file /tmp/host1.key \
   --connect-timeout 120 2>/tmp/ours.err && ours read "$uri" -o 0 -l 1048576 -d /tmp/b1 -q "$HOSTB" --connect-timeout 120 --tls-key-file /tmp/host1.psk \
   --dhchap-secret-file /tmp/host1.key 2>>/tmp/ours.err && cmp /tmp/p1 /tmp/b1; then
  check "our initiator over TLS with DH-HMAC-CHAP: 1 MiB written and read back"
else fail "our initiator over TLS"; tail -5 /tmp/ours.err; fi
printf '[debug]\nloglevel=0\ntls=0\nnl=0\n[authenticate]\nkeyrings=.nvme\n' >/etc/tlshd.conf
tlshd -c /etc/tlshd.conf >/tmp/tlshd.log 2>&1 &   # the TLS handshake upcall daemon
sleep 1
out=$(nvme gen-tls-key --secret="$SECRET" --hostnqn="$HOST1" --subsysnqn="$NQN" --insert 2>&1)
echo "$out"
nvme gen-tls-key --secret="$SECRET" --hostnqn="$HOSTB" --subsysnqn="$NQN" --insert >/dev/null
echo "$out" | grep -qx "$PSK" && check "nvme gen-tls-key prints the interchange key our target is configured with" \
  || fail "gen-tls-key printed another key"
grep psk /proc/keys | sed 's/^/  keyring: /'
connect() { nvme connect -t tcp -a "$TADDR" -s 4420 -n "$NQN" "$@"; }
tls_check() {
  local c=$1
  local key; key=$(cat /sys/class/nvme/$c/tls_key 2>/dev/null)
  [ -n "$key" ] && check "$c runs over TLS (tls_key $key: $(grep "^$key" /proc/keys | awk '{print $9, $10}'))" \
    || fail "$c has no TLS key: the connection is not secured"
}

# 1. TLS: a filesystem through it
phase "nvme connect --tls" connect --hostnqn="$HOST1" --tls || { tail -20 /tmp/tlshd.log; dmesg | tail; exit 1; }
if dev=$(nvme_dev "$NQN"); then
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//'); ctrl=${ctrl#/dev/}
  tls_check "$ctrl"
  phase "io_check over TLS" io_check "$dev" || rc=1
  phase "mkfs.ext4" mkfs.ext4 -q -F "$dev" || rc=1
  mkdir -p /mnt/t && phase "mount" mount "$dev" /mnt/t || rc=1
  head -c 8000000 /dev/urandom >/tmp/f1 && cp /tmp/f1 /mnt/t/f1 && sync && umount /mnt/t && mount "$dev" /mnt/t &&
    cmp /tmp/f1 /mnt/t/f1 && check "file survives umount/mount over TLS" || fail "file round trip"
  umount /mnt/t
  phase "fsck -fn" fsck.ext4 -fn "$dev" || rc=1
else fail "no namespace device"; fi
phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1

# 2. TLS and DH-HMAC-CHAP together
dmesg -C
phase "nvme connect --tls --dhchap-secret" connect --hostnqn="$HOSTB" --tls --dhchap-secret="$KEY1" || { dmesg | tail; exit 1; }
dmesg | grep -q "qid 0: authenticated with hash" && check "authenticated inside TLS: $(dmesg | grep -o 'authenticated with.*' | tail -1)" \
  || fail "no authentication inside TLS"
if dev=$(nvme_dev "$NQN"); then
  ctrl=$(echo "$dev" | sed 's/n[0-9]*$//'); tls_check "${ctrl#/dev/}"
  phase "io_check over TLS + DH-HMAC-CHAP" io_check "$dev" || rc=1
else fail "no namespace device"; fi
phase "nvme disconnect" nvme disconnect -n "$NQN" || rc=1

# 3. the same port in the clear: refused
if connect --hostnqn="$HOST1" >/tmp/clear.log 2>&1; then
  fail "a host in the clear connected to a TLS-required port"; nvme disconnect -n "$NQN"
else check "a host in the clear is refused ($(tail -1 /tmp/clear.log))"; fi
echo "--- tlshd"; tail -6 /tmp/tlshd.log
kill -TERM $tpid; wait $tpid
echo "--- our target's log"
grep -E "TLS|refused|authenticated" /tmp/target.err | sed 's/^.*INFO *//; s/^.*WARNING */WARNING /' | tail -12
tcheck() { grep -q "$1" /tmp/target.err && check "target log: $2" || fail "target log lacks: $2"; }
tcheck "TLS 1.3 with .*: TLS_AES_128_GCM_SHA256, PSK identity NVMe0R01 $HOST1 $NQN (PSK derived with libnvme's older" \
  "TLS 1.3 with the kernel's identity, its PSK derived as nvme-cli 2.13 does"
tcheck "TLS 1.3 with .*: TLS_AES_128_GCM_SHA256, PSK identity NVMe0R01 $HOSTB $NQN\$" "TLS 1.3 with our initiator (RFC 8446 labels)"
tcheck "host $HOSTB authenticated on queue 0" "DH-HMAC-CHAP inside TLS"
tcheck "refused a connection from .*: the port requires TLS" "the host in the clear refused, naming its address"
grep -q "LEAK:" /tmp/target.err && fail "our target leaked buffers"
grep -q "nvmeof target stopped" /tmp/target.out && check "our target stopped cleanly" || fail "our target did not stop cleanly"
echo "SECURITY-TLS-DONE rc=$rc"
exit $rc
