#!/usr/bin/env bash
# A private Avahi in a network namespace, for tests: a D-Bus system bus of its own (a socket in
# DIR, nothing of the machine's) and avahi-daemon on that namespace's interfaces, with its pid
# directory on a tmpfs of its own mount namespace, so that it meets no Avahi of the machine.
#
#   avahi-in-netns.sh start NS DIR   starts them; prints "bus unix:path=DIR/bus" (set
#                                    DBUS_SYSTEM_BUS_ADDRESS to it for avahi-browse/-publish)
#   avahi-in-netns.sh stop DIR       ends the two processes it started (by the PIDs in DIR)
# Needs root, iproute2, dbus-daemon and avahi-daemon (Debian: dbus, avahi-daemon).
set -euo pipefail
me=$(basename "$0")
die() { echo "$me: $*" >&2; exit 1; }
[ $# -ge 2 ] || { echo "usage: $me start NS DIR | stop DIR" >&2; exit 2; }
case $1 in
  start)
    ns=$2 dir=$3
    command -v dbus-daemon >/dev/null && command -v avahi-daemon >/dev/null || die "needs dbus-daemon and avahi-daemon"
    mkdir -p "$dir"
    cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
    cat > "$dir/avahi.conf" <<CONF
[server]
use-ipv4=yes
use-ipv6=no
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
CONF
    ip netns exec "$ns" dbus-daemon --config-file="$dir/bus.conf" --fork --print-pid > "$dir/dbus.pid"
    for _ in $(seq 50); do [ -S "$dir/bus" ] && break; sleep 0.1; done
    [ -S "$dir/bus" ] || die "the bus did not start"
    # ip netns exec gives the command a mount namespace of its own: the pid directory is private
    DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus" ip netns exec "$ns" sh -c \
      "mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f '$dir/avahi.conf'" \
      > "$dir/avahi.log" 2>&1 &
    echo $! > "$dir/avahi.pid"
    for _ in $(seq 100); do grep -q "Server startup complete" "$dir/avahi.log" 2>/dev/null && break; sleep 0.1; done
    grep -q "Server startup complete" "$dir/avahi.log" || die "avahi-daemon did not start: $(tail -3 "$dir/avahi.log")"
    echo "bus unix:path=$dir/bus"
    ;;
  stop)
    dir=$2
    for p in avahi dbus; do
      [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
    done
    ;;
  *) die "start or stop, not '$1'" ;;
esac
