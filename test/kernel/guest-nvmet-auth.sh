#!/bin/bash
# Runs inside the trixie guest: the kernel's NVMe/TCP target (nvmet) with DH-HMAC-CHAP for one
# host ($HOSTNQN, key $KEY, controller key $CKEY; hash $HASH, DH group $DHGROUP), on port 4420,
# until the host side stops the guest. Our initiator connects from outside.
set -u
. /job/lib.sh
NQN=${NQN:?} HOSTNQN=${HOSTNQN:?} KEY=${KEY:?} CKEY=${CKEY:?} HASH=${HASH:-hmac(sha384)} DHGROUP=${DHGROUP:-ffdhe3072}
phase modprobe modprobe -a nvmet nvmet-tcp || exit 1
truncate -s 64M /tmp/ns-auth.img
d=/sys/kernel/config/nvmet
auth_host() {
  mkdir -p "$d/hosts/$HOSTNQN" &&
  echo "$KEY" >"$d/hosts/$HOSTNQN/dhchap_key" && echo "$CKEY" >"$d/hosts/$HOSTNQN/dhchap_ctrl_key" &&
  echo "$HASH" >"$d/hosts/$HOSTNQN/dhchap_hash" && echo "$DHGROUP" >"$d/hosts/$HOSTNQN/dhchap_dhgroup"
}
phase "nvmet host $HOSTNQN with dhchap keys, $HASH, $DHGROUP" auth_host || { dmesg | tail; exit 1; }
phase "nvmet subsystem $NQN" nvmet_subsys "$NQN" /tmp/ns-auth.img || exit 1
echo 0 >"$d/subsystems/$NQN/attr_allow_any_host"
ln -s "$d/hosts/$HOSTNQN" "$d/subsystems/$NQN/allowed_hosts/$HOSTNQN" || exit 1
phase "nvmet tcp port 4420" nvmet_port 1 tcp 0.0.0.0 4420 "$NQN" || exit 1
grep -H . "$d/hosts/$HOSTNQN"/dhchap_hash "$d/hosts/$HOSTNQN"/dhchap_dhgroup
echo READY
wait_stop 1200
dmesg | grep -iE "nvmet|auth" | tail -10
