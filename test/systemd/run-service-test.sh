#!/usr/bin/env bash
# The packaged service where systemd really runs it: a Debian guest booted with systemd as
# PID 1 (test/vm's scripts, with systemd-sysv in the image and a unit that
# runs the host's job; man-db, so that systemd-analyze verify finds the man page) installs nvmeof_*_all.deb and runs guest-service.sh: the unit starts
# (Type=notify), the kernel's NVMe/TCP host connects and moves data, the service's user can
# open no block device it does not serve, a reload adds a block namespace (granted first)
# under the connected host, the watchdog restarts a SIGSTOPped target, and the
# service stops cleanly. Needs root and `mvn package` (the .deb). The image is built on
# first use into $NVMF_VM_CACHE_SYSTEMD (default /var/tmp/nvmf-vm-systemd).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/test/systemd
vm=$top/test/vm
deb=$(ls "$top"/packaging/build/nvmeof_*_all.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] || { echo "service test: build the package first (mvn -DskipTests package)" >&2; exit 1; }
export NVMF_VM_CACHE=${NVMF_VM_CACHE_SYSTEMD:-/var/tmp/nvmf-vm-systemd}
if [ ! -f "$NVMF_VM_CACHE/rootfs.ext4" ] || [ ! -x "$NVMF_VM_CACHE/rootfs/lib/systemd/systemd" ] \
   || [ ! -x "$NVMF_VM_CACHE/rootfs/usr/bin/man" ] || [ ! -x "$NVMF_VM_CACHE/rootfs/usr/bin/setfacl" ] \
   || ! ls -d "$NVMF_VM_CACHE"/rootfs/usr/lib/jvm/java-*/ >/dev/null 2>&1; then
  echo "== building the systemd guest image in $NVMF_VM_CACHE"
  NVMF_VM_EXTRA_PKGS="systemd-sysv dbus man-db acl" "$vm/build-guest.sh" --java
fi
root=$NVMF_VM_CACHE/rootfs
if ! cmp -s "$here/nvmf-systemd-job" "$root/usr/local/sbin/nvmf-systemd-job" \
   || ! cmp -s "$here/nvmf-job.service" "$root/etc/systemd/system/nvmf-job.service"; then
  echo "== installing the job runner unit into the image"
  install -D -m 0755 "$here/nvmf-systemd-job" "$root/usr/local/sbin/nvmf-systemd-job"
  install -D -m 0644 "$here/nvmf-job.service" "$root/etc/systemd/system/nvmf-job.service"
  mkdir -p "$root/etc/systemd/system/default.target.wants"
  ln -sf ../nvmf-job.service "$root/etc/systemd/system/default.target.wants/nvmf-job.service"
  # no login prompts or network waits on the way to the job
  ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
  ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"
  ln -sf /dev/null "$root/etc/systemd/system/systemd-networkd-wait-online.service"
  "$vm/build-guest.sh" --refresh >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/share"
cp "$deb" "$work/share/"
cp "$vm/guest-scripts/lib.sh" "$work/"
cp "$here/guest-service.sh" "$work/"
# One vCPU: HotSpot under multi-threaded TCG crashes now and then (see the README's Status);
# the service cannot be pinned with taskset as the other parts pin their JVMs, so the guest is.
"$vm/run-guest.sh" --timeout 1200 --mem 2048 --cpus 1 --job "$work/job" --share "$work/share" \
  --append "init=/lib/systemd/systemd systemd.show_status=0" "$work/guest-service.sh"
