#!/usr/bin/env bash
# Security interop with Linux 6.12 (a Debian trixie guest, test/vm's scripts
# with --suite trixie): DH-HMAC-CHAP between the kernel's NVMe/TCP host and our target, and between
# our initiator and the kernel's target (nvmet). Needs root, the built jar and QEMU; the trixie
# image is built on first use into $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "security interop: build first (mvn -DskipTests package)" >&2; exit 1; }
export NVMF_VM_CACHE=${NVMF_VM_CACHE_TRIXIE:-/var/tmp/nvmf-vm-trixie}
# with a JRE: the TLS parts run our jar inside the guest (Linux 6.12's TLS sockets send nothing
# through QEMU's user-mode forwarding)
if [ ! -f "$NVMF_VM_CACHE/rootfs.ext4" ] || [ ! -f "$NVMF_VM_CACHE/vmlinuz" ] \
   || ! ls -d "$NVMF_VM_CACHE"/rootfs/usr/lib/jvm/java-*/ >/dev/null 2>&1; then
  echo "== building the trixie guest image (kernel 6.12, nvme-cli 2.13, tlshd, a JRE) in $NVMF_VM_CACHE"
  "$vm/build-guest.sh" --suite trixie --java
fi

work=$(mktemp -d)
chmod 700 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
nvmeof() { java -jar "$jar" "$@"; }
status=0

parts=${SECURITY_PARTS:-A B C}
# ---- part A: the kernel host against our target, with DH-HMAC-CHAP ----
NQN=nqn.2026-11.io.nvmeof:secure
H1=nqn.2014-08.org.nvmexpress:uuid:6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e01
H2=nqn.2014-08.org.nvmexpress:uuid:6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e02
H3=nqn.2014-08.org.nvmexpress:uuid:6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e03
H4=nqn.2014-08.org.nvmexpress:uuid:6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e04   # a TLS key, no DH-HMAC-CHAP key
K1=$(nvmeof gen-dhchap-key --hmac 3 --nqn "$H1")        # SHA-512-transformed, 64 bytes
CK=$(nvmeof gen-dhchap-key --hmac 2 --nqn "$NQN")       # SHA-384-transformed, 48 bytes
K2=$(nvmeof gen-dhchap-key --key-length 64)              # used as it is
K3=$(nvmeof gen-dhchap-key --hmac 1 --nqn "$H3")
K1B=$(nvmeof gen-dhchap-key --hmac 3 --nqn "$H1")       # host 1's key after the rotation
K1C=$(nvmeof gen-dhchap-key --hmac 3 --nqn "$H1")       # and after the second
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
PSK=$(nvmeof gen-tls-key --secret "$SECRET")                # the configured TLS PSK of host 1
umask 077
echo "$K1" >"$work/host1.key"; echo "$CK" >"$work/ctrl.key"; echo "$PSK" >"$work/host1.psk"
# the port has no TLS: host 4, which has a TLS key, must be refused on it
cat >"$work/target.json" <<JSON
{"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "allowed_hosts": ["$H1", "$H2", "$H3", "$H4"],
                 "namespaces": [{"nsid": 1, "backend": "ram", "size": "256M"}]}],
 "hosts": [{"nqn": "$H1", "dhchap_key_file": "host1.key", "dhchap_ctrl_key_file": "ctrl.key"},
           {"nqn": "$H2", "dhchap_key": "$K2", "dhchap_ctrl_key": "$CK",
            "dhchap_hashes": ["sha256"], "dhchap_dhgroups": ["ffdhe3072"]},
           {"nqn": "$H3", "dhchap_key": "$K3", "dhchap_hashes": ["sha384"], "dhchap_dhgroups": ["null"]},
           {"nqn": "$H4", "tls_key_file": "host1.psk"}]}
JSON
umask 022
if [[ " $parts " == *" A "* ]]; then
java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/target.json" \
  >"$work/target.out" 2>"$work/target.err" &
tpid=$!
pids+=($tpid)
for _ in $(seq 200); do grep -q "port 1" "$work/target.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\) port 1 .*/\1/p' "$work/target.out")
[ -n "$port" ] || { echo "target did not start: $(cat "$work/target.err")"; exit 1; }
echo "== target on 127.0.0.1:$port requires DH-HMAC-CHAP of 3 hosts; booting the trixie guest"
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-auth-host.sh" "$work/"
astatus=0
"$vm/run-guest.sh" --timeout 900 --job "$work/ajob" --gfwd "10.0.2.100:4420=$port" \
  --env TADDR=10.0.2.100 --env NQN="$NQN" --env HOST1="$H1" --env KEY1="$K1" --env CKEY1="$CK" \
  --env HOST2="$H2" --env KEY2="$K2" --env HOST3="$H3" --env KEY3="$K3" --env HOST4="$H4" --env KEY1B="$K1B" \
  --env KEY1C="$K1C" \
  "$work/guest-auth-host.sh" &
gpid=$!
# the key rotations: each time the guest says so (host 1 connected with its current key),
# host 1's key changes in the configuration and the target reloads it (SIGHUP)
rotated=0
while kill -0 "$gpid" 2>/dev/null; do
  asked=$(grep -c "^ROTATE-KEY" "$work/ajob/out.log" 2>/dev/null || true)
  if [ "${asked:-0}" -gt "$rotated" ]; then
    next=$K1B; [ "$rotated" = 1 ] && next=$K1C
    (umask 077; echo "$next" >"$work/host1.key.new" && mv "$work/host1.key.new" "$work/host1.key")
    kill -HUP "$tpid"
    rotated=$((rotated + 1))
    echo "== host 1's key rotated ($rotated) in the target's configuration, and the target reloaded"
  fi
  sleep 0.5
done
wait "$gpid" || astatus=$?
kill -TERM "$tpid"; wait "$tpid" 2>/dev/null || true
pids=()
echo "-- our target's log of it:"
grep -E "authenticat|refused" "$work/target.err" | sed 's/^/   /' | tail -20
check_log() { grep -q "$1" "$work/target.err" && echo "check: target log: $2" || { echo "FAILED: target log lacks: $2"; astatus=1; }; }
check_log "host $H1 authenticated on queue 0 with hmac(sha512), DH group ffdhe2048\$" "host 1 authenticated (one-way)"
check_log "host $H1 authenticated on queue 0 with hmac(sha512), DH group ffdhe2048; controller authenticated" "host 1 bidirectional"
check_log "host $H1 re-authenticated on queue 0" "host 1 re-authenticated"
check_log "host $H2 authenticated on queue 0 with hmac(sha256), DH group ffdhe3072" "host 2 with SHA-256, ffdhe3072"
check_log "host $H3 authenticated on queue 0 with hmac(sha384), DH group null" "host 3 with SHA-384, NULL group"
check_log "host $H1 (.*) failed authentication on queue 0: the host's response does not match" "the wrong key, naming the host"
check_log "host $H1 (.*) closed queue 0 without authenticating" "the host without a key, naming the host"
check_log "host $H3 (.*) failed authentication on queue 0: the host asks the controller to authenticate" "host 3's controller key refused"
check_log "refused Connect from .*: host $H4: it has a TLS key and must connect over TLS" "host 4 (a TLS key) refused in the clear"
check_log "the keys of host $H1 changed; controller .* disconnected" "the key change ended host 1's controller"
grep -q "nvmeof target reloaded" "$work/target.out" && echo "check: the target reloaded the rotated key" \
  || { echo "FAILED: no reload of the rotated key"; astatus=1; }
if grep -q "LEAK:" "$work/target.err"; then echo "target leaked buffers"; astatus=1; fi
grep -q "nvmeof target stopped" "$work/target.out" || { echo "target did not stop cleanly"; astatus=1; }
[ $astatus = 0 ] && echo "KERNEL HOST DH-HMAC-CHAP: PASS" || { echo "KERNEL HOST DH-HMAC-CHAP: FAIL ($astatus)"; status=1; }
fi

# ---- part C: the kernel host with TLS (tlshd, the kernel keyring) against our target in the guest ----
if [[ " $parts " == *" C "* ]]; then
echo "== booting the trixie guest with tlshd and our target (TLS required)"
mkdir -p "$work/tshare" "$work/tls"
cp "$jar" "$work/tshare/"
cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-tls-host.sh" "$work/tls/"
cstatus=0
"$vm/run-guest.sh" --timeout 900 --mem 2048 --job "$work/cjob" --share "$work/tshare" \
  --env NQN="$NQN" --env HOST1="$H1" --env SECRET="$SECRET" --env KEY1="$K1" --env PSK="$PSK" \
  "$work/tls/guest-tls-host.sh" || cstatus=$?
[ $cstatus = 0 ] && echo "KERNEL HOST TLS: PASS" || { echo "KERNEL HOST TLS: FAIL ($cstatus)"; status=1; }
fi

# ---- part B: our initiator against the kernel's target (nvmet) with DH-HMAC-CHAP ----
if [[ " $parts " == *" B "* ]]; then
KNQN=nqn.2026-11.io.nvmeof:kernel-secure
HK=nqn.2014-08.org.nvmexpress:uuid:6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e10
KK=$(nvmeof gen-dhchap-key --hmac 1 --nqn "$HK")
KC=$(nvmeof gen-dhchap-key --hmac 3 --nqn "$KNQN")
umask 077; echo "$KK" >"$work/k.key"; echo "$KC" >"$work/kc.key"; echo "$K2" >"$work/wrong.key"; umask 022
kport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
KSECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$work/kshare"; cp "$jar" "$work/kshare/"
nvmeof gen-tls-key --secret "$KSECRET" >"$work/kshare/k.psk"
bstatus=0
kjob=$("$vm/run-guest.sh" --bg --timeout 900 --mem 2048 --job "$work/kjob" --fwd "tcp:127.0.0.1:$kport-:4420" \
  --share "$work/kshare" --env TLS_SECRET="$KSECRET" \
  --env NQN="$KNQN" --env HOSTNQN="$HK" --env KEY="$KK" --env CKEY="$KC" --env HASH="hmac(sha384)" --env DHGROUP=ffdhe3072 \
  "$top/test/kernel/guest-nvmet-auth.sh") || bstatus=1
if [ $bstatus = 0 ]; then
  for _ in $(seq 400); do grep -q READY "$work/kjob/out.log" 2>/dev/null && break; sleep 1; done
  for _ in $(seq 60); do python3 "$vm/tools/nvme-tcp-icreq.py" "$kport" >/dev/null 2>&1 && break; sleep 1; done
  uri="nvme+tcp://127.0.0.1:$kport/$KNQN"
  head -c 4194304 /dev/urandom >"$work/pattern"
  auth=(-q "$HK" --dhchap-secret-file "$work/k.key" --dhchap-ctrl-secret-file "$work/kc.key")
  if nvmeof write "$uri" -o 1048576 -d "$work/pattern" "${auth[@]}" 2>"$work/w.err" &&
     nvmeof read "$uri" -o 1048576 -l 4194304 -d "$work/back" "${auth[@]}" 2>"$work/r.err" &&
     cmp "$work/pattern" "$work/back"; then
    echo "check: 4 MiB written and read back through nvmet with DH-HMAC-CHAP"
  else
    echo "FAILED: write/read through nvmet"; cat "$work/w.err" "$work/r.err" 2>/dev/null | tail -5; bstatus=1
  fi
  grep -h "authenticated with" "$work/w.err" "$work/r.err" | sed 's/^/   /' | head -2
  grep -q "authenticated with hmac(sha384), DH group ffdhe3072; controller authenticated" "$work/r.err" \
    && echo "check: nvmet chose hmac(sha384) and ffdhe3072 and proved the controller key" \
    || { echo "FAILED: our initiator did not report the authentication nvmet is configured for"; bstatus=1; }
  if nvmeof id-ctrl "$uri" -q "$HK" --dhchap-secret-file "$work/wrong.key" >"$work/x.out" 2>"$work/x.err"; then
    echo "FAILED: a wrong key was accepted by nvmet"; bstatus=1
  else
    echo "check: wrong key refused: $(tail -1 "$work/x.err")"
  fi
  if nvmeof id-ctrl "$uri" -q "$HK" --dhchap-secret-file "$work/k.key" --dhchap-ctrl-secret-file "$work/wrong.key" \
       >"$work/y.out" 2>"$work/y.err"; then
    echo "FAILED: a controller without the expected controller key was accepted"; bstatus=1
  else
    echo "check: controller with another key refused: $(tail -1 "$work/y.err")"
  fi
  # TLS 1.3 (tlshd in the guest, the PSK nvme-cli 2.13 put in its keyring) with DH-HMAC-CHAP: run in the guest
  grep -E "^(check|FAILED):" "$work/kjob/out.log" | sed 's/^/   guest /'
  grep -q "TLS-CHECKS-DONE" "$work/kjob/out.log" && ! grep -q "^FAILED" "$work/kjob/out.log" \
    && [ "$(grep -c '^check:' "$work/kjob/out.log")" -ge 4 ] || { echo "FAILED: TLS with nvmet"; bstatus=1; }
  "$vm/run-guest.sh" --stop "$kjob" >/dev/null 2>&1 || true
  tail -12 "$work/kjob/out.log" | sed 's/^/   guest: /'
fi
[ $bstatus = 0 ] && echo "OUR INITIATOR WITH NVMET (DH-HMAC-CHAP, TLS): PASS" || { echo "OUR INITIATOR WITH NVMET (DH-HMAC-CHAP, TLS): FAIL"; status=1; }
fi

if [ $status = 0 ]; then echo "security interop: every part passed"; else echo "security interop: FAILED"; fi
exit $status
