#!/bin/bash
# Runs in the blktests guest (kernel 6.12, nvme-cli 2.13, fio, xfsprogs): our target in the
# guest, run by the control script, and blktests' nvme group (or $BLKTESTS_TESTS) with the
# kernel's NVMe/TCP host against it through NVME_TARGET_CONTROL.
set -u
. /job/lib.sh
phase "modprobe nvme-tcp loop" modprobe -a nvme-tcp loop || exit 1
uname -r; nvme version | head -1; fio --version; java -version 2>&1 | head -1
[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn
[ -s /etc/nvme/hostid ] || sed 's/.*uuid://' /etc/nvme/hostnqn >/etc/nvme/hostid
rm -rf /root/blktests && cp -a /mnt/share/blktests /root/blktests
install -m 0755 /mnt/share/nvmeof-target-control /root/nvmeof-target-control
export NVMEOF_BT_JAR=/mnt/share/nvmeof.jar NVMEOF_BT_STATE=/run/nvmeof-blktests
mkdir -p "$NVMEOF_BT_STATE" && mount -t tmpfs -o size=1400M tmpfs "$NVMEOF_BT_STATE"
phase "our target" /root/nvmeof-target-control start || { cat /run/nvmeof-blktests/target.err; exit 1; }
cd /root/blktests
# namespaces are files in the state directory (a tmpfs): 512 MiB each, which every test that
# names a size (nvme/012: 350 MiB) takes
export NVME_IMG_SIZE=512M
echo "NVME_IMG_SIZE=512M" >config
exclude=()
for t in ${BLKTESTS_EXCLUDE:-}; do exclude+=(-x "$t"); done
# shellcheck disable=SC2086
NVME_TARGET_CONTROL=/root/nvmeof-target-control ./check "${exclude[@]}" ${BLKTESTS_TESTS:-nvme}
rc=$?
/root/nvmeof-target-control stop
if grep -q "LEAK:" /run/nvmeof-blktests/target.err; then
  echo "FAILED: the target leaked buffers"; grep -m3 -A5 "LEAK:" /run/nvmeof-blktests/target.err; rc=1
fi
# what a failed test saw
for f in results/nodev*/nvme/*.out.bad; do
  [ -e "$f" ] || continue
  echo "--- ${f#results/}"; diff -u "tests/nvme/$(basename "$f" .out.bad).out" "$f" | head -30
  [ -e "${f%.out.bad}.full" ] && tail -20 "${f%.out.bad}.full"
done
grep -E "WARNING|SEVERE|refused|failed" /run/nvmeof-blktests/target.err | tail -20
echo "BLKTESTS-DONE rc=$rc"
exit $rc
