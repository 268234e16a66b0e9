#!/bin/bash
# Runs inside the QEMU guest (Linux 6.12): the kernel's target, nvmet, serving one subsystem on two
# NVMe/TCP ports with ANA as configfs sets it: group 1 optimized on port 1 (4420), non-optimized on
# port 2 (4421). Our initiator on the host reaches each port through its own forward and runs I/O
# through both as one multipath set. Commands from the host, files /job/cmd.N, answered "ACK N":
#   ana PORT STATE   write STATE to ports/PORT/ana_groups/1/ana_state (nvmet sends the ANA notice)
# Stops when the host runs `run-guest.sh --stop`.
set -u
. /job/lib.sh
NQN=${NQN:?}
phase modprobe modprobe -a nvmet nvmet-tcp || exit 1
truncate -s 64M /tmp/ns1.img
phase "nvmet subsystem $NQN" nvmet_subsys "$NQN" /tmp/ns1.img || exit 1
phase "port 1 (4420)" nvmet_port 1 tcp 0.0.0.0 4420 "$NQN" || exit 1
phase "port 2 (4421)" nvmet_port 2 tcp 0.0.0.0 4421 "$NQN" || exit 1
echo non-optimized >/sys/kernel/config/nvmet/ports/2/ana_groups/1/ana_state
for p in 1 2; do echo "port $p group 1: $(cat /sys/kernel/config/nvmet/ports/$p/ana_groups/1/ana_state)"; done
echo READY
n=1
while [ ! -e /job/stop ]; do
  if [ -f /job/cmd.$n ]; then
    read -r cmd port state </job/cmd.$n
    if [ "$cmd" = ana ] && echo "$state" >/sys/kernel/config/nvmet/ports/"$port"/ana_groups/1/ana_state; then
      echo "port $port group 1 now $(cat /sys/kernel/config/nvmet/ports/"$port"/ana_groups/1/ana_state)"
      echo "ACK $n ok"
    else
      echo "ACK $n FAIL"
    fi
    n=$((n + 1))
  fi
  sleep 0.1
done
dmesg | grep -i nvmet | tail -15
