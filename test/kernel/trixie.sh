# The Debian trixie guest image (Linux 6.12, nvme-cli, fio, nvme-stas, a JRE), sourced after setting $vm:
# NVMF_VM_CACHE becomes $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie), and the image
# is built there on first use.
export NVMF_VM_CACHE=${NVMF_VM_CACHE_TRIXIE:-/var/tmp/nvmf-vm-trixie}
if [ ! -f "$NVMF_VM_CACHE/rootfs.ext4" ] || [ ! -x "$NVMF_VM_CACHE/rootfs/usr/bin/fio" ] \
   || [ ! -x "$NVMF_VM_CACHE/rootfs/usr/sbin/stafd" ] \
   || ! ls -d "$NVMF_VM_CACHE"/rootfs/usr/lib/jvm/java-*/ >/dev/null 2>&1; then
  echo "== building the trixie guest image (kernel 6.12, nvme-cli, fio, nvme-stas, a JRE) in $NVMF_VM_CACHE"
  "$vm/build-guest.sh" --suite trixie --java
fi
