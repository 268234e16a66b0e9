#!/bin/bash
# Runs in the systemd guest (run-service-test.sh): the Debian package installed, the unit
# started by systemd, the kernel host connected, a reload, the watchdog, a clean stop.
set -euo pipefail
step() { echo "== $*"; }
fail() { echo "SERVICE TEST FAIL: $*"; journalctl -u nvmeof-target --no-pager | tail -40 || true; exit 1; }
show() { systemctl show -p "$1" --value nvmeof-target; }

step "PID 1 is $(ps -o comm= -p 1), $(systemctl --version | head -1)"
[ "$(ps -o comm= -p 1)" = systemd ] || fail "systemd is not PID 1"

step "install $(basename /mnt/share/nvmeof_*_all.deb)"
dpkg -i /mnt/share/nvmeof_*_all.deb
for f in /usr/bin/nvmeof /usr/share/nvmeof/nvmeof.jar /lib/systemd/system/nvmeof-target.service \
         /etc/nvmeof/target.conf /etc/nvmeof/target.json /usr/share/man/man1/nvmeof-target.1.gz \
         /usr/share/bash-completion/completions/nvmeof; do
  [ -e "$f" ] || fail "the package did not install $f"
done
id nvmeof || fail "no nvmeof user"
! id -nG nvmeof | grep -qw disk || fail "the nvmeof user is in the disk group: every block device is open to it"
[ "$(stat -c '%U:%G %a' /etc/nvmeof/target.json)" = "root:nvmeof 640" ] || fail "config permissions: $(stat -c '%U:%G %a' /etc/nvmeof/target.json)"
systemctl is-enabled nvmeof-target || fail "the package did not enable the unit"
zcat /usr/share/man/man1/nvmeof-bench.1.gz | grep -q "rwmixread" || fail "the man page lacks the bench's flags"
grep -q "nvmeof" /usr/share/bash-completion/completions/nvmeof || fail "empty completion script"

step "systemd-analyze verify"
out=$(systemd-analyze verify /lib/systemd/system/nvmeof-target.service 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "verify is not clean: $out"
step "systemd-analyze security"
score=$(systemd-analyze security --offline=true --no-pager /lib/systemd/system/nvmeof-target.service | sed -n 's/.*Overall exposure level for nvmeof-target.service: \([0-9.]*\).*/\1/p')
echo "exposure $score"
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }' || fail "exposure $score is above 3.0"

step "nvmeof demo, as a user runs it after installing"
(cd /tmp && nvmeof demo --runtime 1) | tail -5

step "systemctl start (Type=notify: returns once every port listens)"
t0=$(date +%s)
systemctl start nvmeof-target || fail "start"
echo "started in $(( $(date +%s) - t0 )) s"
[ "$(show ActiveState)" = active ] || fail "not active: $(show ActiveState)"
pid=$(show MainPID)
[ "$(ps -o user= -p "$pid")" = nvmeof ] || fail "runs as $(ps -o user= -p "$pid"), not nvmeof"
[ "$(ps -o comm= -p "$pid")" = java ] || fail "main process is $(ps -o comm= -p "$pid"), not the JVM"
grep -E '^Cap(Eff|Bnd)' "/proc/$pid/status"
systemctl status --no-pager nvmeof-target | grep -q "Status: \"serving 1 subsystem(s), 1 namespace(s) on 2 port(s)\"" \
  || fail "no READY status: $(systemctl status --no-pager nvmeof-target | head -5)"
ss -ltn | grep -q ":4420 " || fail "nothing listens on 4420"

step "the kernel host connects (nvme-tcp) and moves data"
modprobe nvme-tcp
NQN=nqn.2026-11.io.nvmeof:target1
nvme discover -t tcp -a 127.0.0.1 -s 8009 | grep -q "$NQN" || fail "discovery does not list $NQN"
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" || fail "connect"
dev=
for _ in $(seq 100); do
  for d in /dev/nvme*n1; do [ -b "$d" ] && dev=$d; done
  [ -n "$dev" ] && break
  sleep 0.2
done
[ -b "$dev" ] || fail "no namespace block device"
ctrl=/sys/class/nvme/$(basename "$dev" | sed 's/n[0-9]*$//')
head -c $((4 << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of=/tmp/back bs=1M count=4 iflag=direct status=none
cmp /tmp/data /tmp/back || fail "data read back differs"
echo "4 MiB written and read back through $dev"

step "the service's user opens no block device the configuration does not serve"
modprobe loop 2>/dev/null || true
truncate -s 64M /var/tmp/served.img /var/tmp/other.img
served=$(losetup -f --show /var/tmp/served.img)
other=$(losetup -f --show /var/tmp/other.img)
for d in "$served" "$other"; do
  if runuser -u nvmeof -- dd if="$d" of=/dev/null bs=4k count=1 status=none 2>/tmp/dd.err; then
    fail "the nvmeof user can read $d, which no namespace serves"
  fi
  echo "nvmeof cannot open $d: $(tail -1 /tmp/dd.err)"
done

step "systemctl reload adds a block namespace under the connected host, its device granted first"
# one more namespace in the JSON, as an operator would add it
sed -i 's|"size": "1G"}|"size": "1G"},\n       {"nsid": 2, "backend": "block", "path": "'"$served"'"}|' /etc/nvmeof/target.json
grep -q '"nsid": 2' /etc/nvmeof/target.json || fail "could not edit the config"
systemctl reload nvmeof-target || fail "reload"
getfacl -p "$served" | grep -q "^user:nvmeof:rw-" || fail "no grant on $served: $(getfacl -p "$served")"
runuser -u nvmeof -- dd if="$served" of=/dev/null bs=4k count=1 status=none || fail "nvmeof cannot read the served $served"
if runuser -u nvmeof -- dd if="$other" of=/dev/null bs=4k count=1 status=none 2>/dev/null; then
  fail "the nvmeof user can read $other, which no namespace serves"
fi
echo "$served granted to nvmeof; $other still closed to it"
for _ in $(seq 150); do
  [ -b "${dev%n1}n2" ] && break
  sleep 0.2
done
[ -b "${dev%n1}n2" ] || fail "namespace 2 did not appear after the reload"
[ "$(show ActiveState)" = active ] || fail "not active after reload"
[ "$(show MainPID)" = "$pid" ] || fail "the reload restarted the process"
journalctl -u nvmeof-target --no-pager | grep -q "namespace 2 added" || fail "no reload in the journal"
echo "namespace 2 appeared as ${dev%n1}n2"

step "the management API under the unit's sandbox: /run/nvmeof/rpc.sock, its changes kept in /var/lib/nvmeof"
[ "$(stat -c '%a %U %G' /run/nvmeof)" = "750 nvmeof nvmeof" ] || fail "runtime directory: $(stat -c '%a %U %G' /run/nvmeof)"
[ "$(stat -c '%a %U %G' /run/nvmeof/rpc.sock)" = "660 nvmeof nvmeof" ] || fail "socket: $(stat -c '%a %U %G' /run/nvmeof/rpc.sock)"
nvmeof ns add --subsystem "$NQN" ram:16M || fail "nvmeof ns add"
for _ in $(seq 150); do
  [ -b "${dev%n1}n3" ] && break
  sleep 0.2
done
[ -b "${dev%n1}n3" ] || fail "the namespace the API added did not appear under the connected host"
[ "$(stat -c '%a %U' /var/lib/nvmeof/state.json)" = "600 nvmeof" ] || fail "state: $(stat -c '%a %U' /var/lib/nvmeof/state.json)"
grep -q '"nsid" : 3' /var/lib/nvmeof/state.json || fail "the API's namespace is not in the state: $(cat /var/lib/nvmeof/state.json)"
grep -q '"nsid": 3' /etc/nvmeof/target.json && fail "the API wrote the operator's configuration"
# a member of the nvmeof group may call it; a user outside it cannot reach the socket
useradd -M -G nvmeof -s /usr/sbin/nologin rpcuser
runuser -u rpcuser -- nvmeof rpc get_stats >/dev/null || fail "a member of the nvmeof group cannot call the API"
if runuser -u nobody -- nvmeof rpc get_stats >/tmp/rpc.err 2>&1; then fail "nobody reached the management socket"; fi
echo "nobody: $(head -1 /tmp/rpc.err)"
journalctl -u nvmeof-target --no-pager | grep -q "management API: user root (group root) (add_namespace $NQN)" \
  || fail "the change is not in the journal with its caller"
echo "namespace 3 added through the API as ${dev%n1}n3; kept in /var/lib/nvmeof/state.json"

step "the watchdog restarts a stopped target"
restarts=$(show NRestarts)
kill -STOP "$pid"
for _ in $(seq 240); do
  newpid=$(show MainPID)
  [ "$(show NRestarts)" -gt "$restarts" ] && [ "$newpid" != 0 ] && [ "$newpid" != "$pid" ] \
    && [ "$(show ActiveState)" = active ] && break
  sleep 0.5
done
[ "$(show NRestarts)" -gt "$restarts" ] || fail "no restart after SIGSTOP (NRestarts $(show NRestarts))"
[ "$(show ActiveState)" = active ] || fail "not active after the watchdog restart"
journalctl -u nvmeof-target --no-pager | grep -i "watchdog timeout" || fail "no watchdog timeout in the journal"
echo "restarted: pid $pid -> $(show MainPID)"
# the kernel host reconnects to the restarted target by itself; the data is still there
for _ in $(seq 300); do
  [ "$(cat "$ctrl/state" 2>/dev/null)" = live ] && break
  sleep 0.2
done
[ "$(cat "$ctrl/state" 2>/dev/null)" = live ] || fail "the kernel host did not reconnect ($(cat "$ctrl/state" 2>/dev/null))"
dd if="$dev" of=/tmp/back2 bs=1M count=4 iflag=direct status=none
cmp /tmp/data /tmp/back2 || fail "data differs after the restart"
echo "the host reconnected and read its data back"
for _ in $(seq 150); do
  [ -b "${dev%n1}n3" ] && break
  sleep 0.2
done
[ -b "${dev%n1}n3" ] || fail "the API's namespace did not come back with the restarted target"
echo "the API's namespace 3 came back with it (the state, applied over the configuration file)"

step "systemctl stop"
nvme disconnect -n "$NQN" >/dev/null
systemctl stop nvmeof-target
# a configuration without the block namespace takes the grant back at the next start
sed -i '/"backend": "block"/d; s|"size": "1G"},|"size": "1G"}|' /etc/nvmeof/target.json
systemctl start nvmeof-target || fail "start without the block namespace"
getfacl -p "$served" | grep -q "^user:nvmeof:" && fail "the grant on $served stayed: $(getfacl -p "$served")"
echo "the grant on $served went with its namespace"
systemctl stop nvmeof-target
[ "$(show ActiveState)" = inactive ] || fail "not inactive after stop: $(show ActiveState)"
[ "$(show Result)" = success ] || fail "stop result $(show Result)"
journalctl -u nvmeof-target --no-pager | grep -q "nvmeof target stopped" || fail "no clean stop in the journal"

step "dpkg --purge: the service, its user, its config and its state go"
userdel rpcuser
dpkg --purge nvmeof
[ ! -e /usr/bin/nvmeof ] && [ ! -e /lib/systemd/system/nvmeof-target.service ] || fail "files left after purge"
! id nvmeof 2>/dev/null || fail "the nvmeof user is left after purge"
[ ! -e /etc/nvmeof ] && [ ! -e /var/lib/nvmeof ] || fail "config or state left after purge"
echo "SERVICE TEST: PASS"
