#!/bin/bash
# Runs inside a QEMU guest: a shell that the host script drives, for scenarios where the host
# and the guest take turns. Each /job/cmd.N (N = 1, 2, ...) is a bash script, run in order; its
# output (stdout and stderr) goes to /job/res.N, then "ACK N RC" (its exit status) to this
# script's output. /job/stop (run-guest.sh --stop) ends it. The host side is test/kernel/guest.sh.
set -u
. /job/lib.sh
echo "kernel $(uname -r); $(nvme version 2>&1 | head -1)"
echo READY
n=1
while [ ! -e /job/stop ]; do
  if [ -f "/job/cmd.$n" ]; then
    bash "/job/cmd.$n" >"/job/res.$n.tmp" 2>&1
    rc=$?
    mv "/job/res.$n.tmp" "/job/res.$n"
    echo "ACK $n $rc"
    n=$((n + 1))
  else
    sleep 0.1
  fi
done
