#!/usr/bin/env bash
# Separate machines on one: network namespaces for a cluster, its gateways and their hosts, so
# that a gateway can be cut from its hosts or from its cluster for real (a link goes down; no
# socket is closed, packets go nowhere). Every address lives inside these namespaces; the
# caller's own namespace gets no address, route or link. Needs root and iproute2.
#
#   PREFIX-ceph    bridge br0 10.77.0.1/24   the cluster network (run Ceph here, CEPH_ADDR=10.77.0.1)
#   PREFIX-hosts   bridge br0 10.78.0.1/24   the host network (run hosts here)
#   PREFIX-GW      the Nth gateway (N = 0, 1, ...): c0 10.77.0.(11+N) on the cluster bridge
#                  (port GW-c there), h0 10.78.0.(11+N) on the host bridge (port GW-h there)
#
#   netns-lab.sh create PREFIX GW...   makes them; prints one line per namespace:
#                                      "ceph NS 10.77.0.1", "hosts NS 10.78.0.1",
#                                      "gateway GW NS CLUSTER_ADDR HOST_ADDR"
#   netns-lab.sh cut PREFIX GW hosts|ceph    sets GW's port on that bridge down
#   netns-lab.sh heal PREFIX GW hosts|ceph   sets it up again
#   netns-lab.sh destroy PREFIX        removes every PREFIX-* namespace (their links go too);
#                                      what runs in them must have been ended first
# PREFIX: letters, digits and dashes, at most 20 characters.
set -euo pipefail
me=$(basename "$0")
die() { echo "$me: $*" >&2; exit 1; }
[ $# -ge 2 ] || { echo "usage: $me create|cut|heal|destroy PREFIX [GW...]" >&2; exit 2; }
cmd=$1 prefix=$2
shift 2
[[ $prefix =~ ^[A-Za-z0-9-]{1,20}$ ]] || die "PREFIX must be 1-20 letters, digits or dashes, not '$prefix'"
ns() { echo "$prefix-$1"; }

bridge() {   # bridge NAME ADDRESS
  ip netns add "$(ns "$1")"
  ip -n "$(ns "$1")" link set lo up
  ip -n "$(ns "$1")" link add br0 type bridge
  ip -n "$(ns "$1")" addr add "$2/24" dev br0
  ip -n "$(ns "$1")" link set br0 up
}
veth() {     # veth GW INNER BRIDGE_NS PORT ADDRESS
  ip link add "$2" netns "$(ns "$1")" type veth peer name "$4" netns "$(ns "$3")"
  ip -n "$(ns "$3")" link set "$4" master br0 up
  ip -n "$(ns "$1")" addr add "$5/24" dev "$2"
  ip -n "$(ns "$1")" link set "$2" up
}
side() {
  case $1 in hosts) echo "$(ns hosts)" ;; ceph) echo "$(ns ceph)" ;; *) die "the link is hosts or ceph, not '$1'" ;; esac
}

case $cmd in
  create)
    [ $# -ge 1 ] || die "create: name at least one gateway"
    trap '"$0" destroy "$prefix" >/dev/null 2>&1' ERR
    bridge ceph 10.77.0.1
    bridge hosts 10.78.0.1
    echo "ceph $(ns ceph) 10.77.0.1"
    echo "hosts $(ns hosts) 10.78.0.1"
    i=0
    for g in "$@"; do
      [[ $g =~ ^[a-z0-9]{1,8}$ ]] || die "a gateway's name is 1-8 lowercase letters or digits, not '$g'"
      ip netns add "$(ns "$g")"
      ip -n "$(ns "$g")" link set lo up
      veth "$g" c0 ceph "$g-c" "10.77.0.$((11 + i))"
      veth "$g" h0 hosts "$g-h" "10.78.0.$((11 + i))"
      echo "gateway $g $(ns "$g") 10.77.0.$((11 + i)) 10.78.0.$((11 + i))"
      i=$((i + 1))
    done ;;
  cut | heal)
    [ $# = 2 ] || die "$cmd PREFIX GW hosts|ceph"
    [ "$cmd" = cut ] && state=down || state=up
    ip -n "$(side "$2")" link set dev "$1-${2:0:1}" "$state" ;;
  destroy)
    for n in $(ip netns list | awk '{print $1}' | grep -E "^$prefix-" || true); do ip netns del "$n"; done ;;
  *) die "unknown command $cmd" ;;
esac
