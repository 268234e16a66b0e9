# SPDK's test programs against our target (sourced). Needs $SPDK_DIR (a build by
# bench/spdk/build-spdk.sh). spdk_run LOG PROGRAM ARGS...: runs an SPDK program with 2 MiB
# hugepages (1024 of them, hugetlbfs on /dev/hugepages), then puts the page count and the mount
# back as they were and removes the program's runtime directory; its output goes to LOG; returns
# its exit status.
spdk_run() {
  local log=$1 prog=$2 before mounted=0 rc=0
  shift 2
  before=$(cat /proc/sys/vm/nr_hugepages)
  mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages; mounted=1; }
  [ "$before" -ge 1024 ] || echo 1024 >/proc/sys/vm/nr_hugepages
  LD_LIBRARY_PATH=$SPDK_DIR/build/lib:$SPDK_DIR/isa-l/.libs timeout 120 "$prog" "$@" >"$log" 2>&1 || rc=$?
  echo "$before" >/proc/sys/vm/nr_hugepages
  if [ $mounted = 1 ]; then umount /dev/hugepages; fi
  rm -rf /var/run/dpdk/spdk0 2>/dev/null || true   # the runtime directory of shm id 0, which these programs use
  return $rc
}
