#!/bin/bash
# build-spdk.sh [DIR]: build SPDK v25.09 (NVMe/TCP + NVMe/RDMA, the RBD bdev, mDNS through Avahi, shared libraries,
# Debian's DPDK 22.11)
# into DIR (default /var/tmp/spdk) as a peer and yardstick. About 5 minutes on 2 cores.
# The sources come from git directories (clones or mirrors) of spdk/spdk, intel/isa-l and
# intel/isa-l_crypto, named by SPDK_GIT, ISAL_GIT and ISAL_CRYPTO_GIT; they must hold the tags
# v25.09, v2.31.1 and v2.25.0.
set -euo pipefail
D=${1:-/var/tmp/spdk}
SPDK_GIT=${SPDK_GIT:?set SPDK_GIT to a git directory of spdk/spdk}
ISAL_GIT=${ISAL_GIT:?set ISAL_GIT to a git directory of intel/isa-l}
ISAL_CRYPTO_GIT=${ISAL_CRYPTO_GIT:?set ISAL_CRYPTO_GIT to a git directory of intel/isa-l_crypto}
for g in "$SPDK_GIT" "$ISAL_GIT" "$ISAL_CRYPTO_GIT"; do
  git -C "$g" rev-parse --git-dir >/dev/null 2>&1 || { echo "build-spdk: no git directory at $g (clone it first)" >&2; exit 1; }
done
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq gcc g++ make libcunit1-dev libaio-dev libssl-dev libjson-c-dev libcmocka-dev uuid-dev \
  libkeyutils-dev libncurses-dev python3-dev pkgconf libnuma-dev libdpdk-dev libibverbs-dev librdmacm-dev nasm \
  autoconf automake libtool librbd-dev librados-dev libavahi-client-dev >/dev/null
rm -rf "$D"; mkdir -p "$D"
git -C "$SPDK_GIT" archive v25.09 | tar -x -C "$D"
git -C "$ISAL_GIT" archive v2.31.1 | tar -x -C "$D/isa-l"              # SPDK's submodule pin, taken by tag
git -C "$ISAL_CRYPTO_GIT" archive v2.25.0 | tar -x -C "$D/isa-l-crypto"
cd "$D"
./configure --with-dpdk --with-rdma --with-rbd --with-avahi --with-shared --without-crypto --without-vhost --without-virtio \
  --without-vfio-user --without-nvme-cuse --without-ublk --without-idxd --without-fsdev --without-usdt --disable-unit-tests
sed -i 's/^CONFIG_IPSEC_MB?=y/CONFIG_IPSEC_MB?=n/; s/^CONFIG_ISAL_CRYPTO?=y/CONFIG_ISAL_CRYPTO?=n/' mk/config.mk
# Debian's DPDK is 22.11.x with x > 4, which SPDK refuses by version; we run with --no-pci, so the PCI ABI is unused.
sed -i 's/if (minor > 4) {/if (minor > 99) {/' lib/env_dpdk/pci_dpdk.c
make -j"$(nproc)"
echo "SPDK built in $D: build/bin/nvmf_tgt, build/bin/spdk_nvme_perf, build/bin/spdk_nvme_identify (LD_LIBRARY_PATH=$D/build/lib)"
