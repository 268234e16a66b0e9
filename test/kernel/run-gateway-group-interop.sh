#!/usr/bin/env bash
# Part 13: a gateway group over one RBD image on separate (namespaced) machines, proven with
# Linux's native NVMe multipath (a Debian trixie guest, Linux 6.12). test/net/netns-lab.sh makes
# the machines: Ceph (one node, test/ceph/ceph-cluster.sh) in its namespace, gateways A and B
# (our target, the launcher's defaults: a 10 s lease) each in theirs on the cluster network and
# the host network, and QEMU in the hosts' namespace. A is the preferred owner of ANA group 1
# (failback after FAILBACK_MS, 5 s here). The guest (guest-multipath.sh) keeps fio writing and
# verifying (CRC32C) through the multipath device while this script, on A (the owner) and then
# on B (the standby):
#   - SIGKILLs it and starts it again, ROUNDS times;
#   - cuts it from the hosts (its link goes down, nothing is closed) and heals it;
#   - cuts it from Ceph and heals it;
#   - freezes it (SIGSTOP) past its lease and thaws it.
# It measures, from the gateways' roles and I/O counters (their management sockets, every 20-50
# ms, from just before each event): how long until I/O runs on the other gateway, until the other
# owns the group (failover: held to lease + 2 s), and until A owns it again (failback: held to
# the delay + 5 s). 0 I/O errors and 0 bad blocks in every fio round; the fenced clients are in
# Ceph's blocklist. Needs root, the built jar, QEMU, iproute2 and Ceph's packages; the trixie
# image is built on first use into $NVMF_VM_CACHE_TRIXIE (default /var/tmp/nvmf-vm-trixie).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/test/vm
jar=$top/cli/build/nvmeof.jar
[ -f "$jar" ] || { echo "gateway group interop: build first (mvn -DskipTests package)" >&2; exit 1; }
for c in ceph-mon ceph-osd rbd ip socat; do
  command -v $c >/dev/null || { echo "gateway group interop: $c is missing" >&2; exit 1; }
done
. "$top/test/kernel/trixie.sh"
ROUNDS=${ROUNDS:-3}
# the lease is the launcher's default (the settings table's, as --show-config prints it)
LEASE_MS=$(java -jar "$jar" target --listen tcp://127.0.0.1:0 --subsystem nqn.2026-12.io.nvmeof:probe --namespace ram:1M \
  --show-config 2>/dev/null | sed -n 's/.*"gateway_lease_ms" *: *\([0-9]*\).*/\1/p')
[ -n "$LEASE_MS" ] || { echo "gateway group interop: no gateway_lease_ms in --show-config" >&2; exit 1; }
FAILBACK_MS=${FAILBACK_MS:-5000}
KATO=5 RECONNECT=1
# bounds, in seconds: as part 9's for the paths (a kill resets the connections; a partition is
# noticed by the keep-alive); failover within the lease + 2 s of the event; failback within the
# delay + 5 s of the preferred gateway being back (running, or healed and rejoined)
KILL_BOUND=$((KATO + RECONNECT)) PARTITION_BOUND=$((3 * KATO)) BACK_BOUND=10
FAILOVER_BOUND=$((LEASE_MS / 1000 + 2)) FAILBACK_BOUND=$((FAILBACK_MS / 1000 + 5))

work=$(mktemp -d -p /var/tmp nvmeof-gateway-group.XXXXXX)
lab=nvmfgw$$
pids=()
status=0
fail() { echo "FAILED: $*"; status=1; }
cleanup() {
  [ -s "$work/job/qemu.pid" ] && kill -TERM "$(cat "$work/job/qemu.pid")" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns exec "$lab-ceph" "$top/test/ceph/ceph-cluster.sh" stop "$work/ceph" >/dev/null 2>&1 || true
  bash "$top/test/net/netns-lab.sh" destroy "$lab" || true
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "(logs kept in $work)"; fi
}
trap cleanup EXIT

# ---- the machines: Ceph, two gateways, the hosts ----
bash "$top/test/net/netns-lab.sh" create "$lab" a b >"$work/lab"
cat "$work/lab"
ceph_addr=$(awk '$1 == "ceph" {print $3}' "$work/lab")
addr_a=$(awk '$1 == "gateway" && $2 == "a" {print $5}' "$work/lab")
addr_b=$(awk '$1 == "gateway" && $2 == "b" {print $5}' "$work/lab")
ip netns exec "$lab-ceph" env CEPH_ADDR="$ceph_addr" "$top/test/ceph/ceph-cluster.sh" start "$work/ceph" >"$work/ceph.env"
. "$work/ceph.env"
cephc() { ip netns exec "$lab-ceph" "$@" --conf "$CEPH_CONF"; }
cephc rbd create --size 256M rbd/gw

NQN=nqn.2026-12.io.nvmeof:gateway-group
. "$top/test/kernel/gateways.sh"
GW_GROUP=interop GW_IMAGE=gw GW_SERIAL=GWGROUP1 GW_ADDR_A=$addr_a GW_ADDR_B=$addr_b
GW_GROUP_EXTRA=", \"failback_delay_ms\": $FAILBACK_MS"
group_gateway_config a "$addr_a" 4420 1 999 >"$work/a.json"
group_gateway_config b "$addr_b" 4420 1000 1999 >"$work/b.json"

gw_launch[A]="ip netns exec $lab-a" gw_launch[B]="ip netns exec $lab-b"
gw_listen[A]=$addr_a:4420 gw_listen[B]=$addr_b:4420
# lab_link cut|heal GATEWAY hosts|ceph (a script, so that `after` can run it)
printf '#!/bin/sh\nexec bash %q "$1" %q "$(echo "$2" | tr AB ab)" "$3"\n' "$top/test/net/netns-lab.sh" "$lab" >"$work/lab_link"
chmod +x "$work/lab_link"
lab_link() { "$work/lab_link" "$@"; }
# role WHAT GATEWAY ROLE BOUND SINCE: seconds from SINCE until GATEWAY has ROLE, held to BOUND
role() {
  local t rc=0
  t=$(io "$(sock "$2")" wait-role 120 "$3" "$5") || rc=$?
  judge "$1" "$4" $rc "$t"
}
# client GATEWAY: its Ceph client's address, from its last join or rejoin event
client() { io "$(sock "$1")" group | python3 -c '
import json, re, sys
found = [m.group(1) for e in json.load(sys.stdin)["events"] for m in [re.search(r"through (\S+?/\d+)", e["what"])] if m]
print(found[-1] if found else "")'; }
fenced() {   # fenced GATEWAY CLIENT: Ceph's blocklist holds CLIENT
  if cephc ceph osd blocklist ls 2>/dev/null | grep -qF "$2"; then echo "   Ceph's blocklist holds $1's old client $2"
  else fail "Ceph's blocklist does not hold $1's old client $2"; fi
}

start_gateway A
role "A joins and owns group 1" A owner 30 "$(now)" >/dev/null
start_gateway B
role "B joins as standby" B standby 30 "$(now)" >/dev/null
echo "== gateways A on $addr_a:4420 (owner of group 1) and B on $addr_b:4420 (standby), namespaces $lab-*; image rbd/gw"

cp "$vm/guest-scripts/lib.sh" "$top/test/kernel/guest-multipath.sh" "$work/"
job=$work/job
ip netns exec "$lab-hosts" "$vm/run-guest.sh" --timeout 3000 --mem 2048 --job "$job" \
  --gfwd "10.0.2.100:4420=$addr_a:4420" --gfwd "10.0.2.101:4420=$addr_b:4420" \
  --env NQN="$NQN" --env PA=4420 --env PB=4420 --env DISCOVERY=0 --env KATO="$KATO" --env RECONNECT="$RECONNECT" \
  "$work/guest-multipath.sh" &
guest=$!
await_load

# back_to_a WHAT SINCE: A owns its group again (failback), the host sees it and uses it alone
back_to_a() {
  role "$1: A owns group 1 again (failback)" A owner "$FAILBACK_BOUND" "$2" || return 1
  guest paths 30 A=live/optimized B=live/non-optimized || return 1
  measure "$1: I/O on A" A $BACK_BOUND 0 "$(now)" || return 1
}

owner_events() {
  local r t c
  guest paths 60 A=live/optimized B=live/non-optimized || return 1
  measure "I/O on the owner (A)" A 30 0 "$(now)" || return 1
  idle B || return 1
  for r in $(seq "$ROUNDS"); do
    echo "== round $r: SIGKILL gateway A (the owner)"
    c=$(client A)
    t=$(now)
    after "round $r: A killed, I/O on B" B $KILL_BOUND kill -KILL "${gpid[A]}" || return 1
    kill_gateway A
    role "round $r: A killed, B owns group 1 (failover)" B owner $FAILOVER_BOUND "$t" || return 1
    fenced A "$c"
    guest paths 30 A=connecting B=live/optimized || return 1
    start_gateway A || { fail "gateway A did not restart"; return 1; }
    back_to_a "round $r: A restarted" "$(now)" || return 1
  done

  echo "== A cut from the hosts (it still reaches Ceph, and keeps its lease)"
  after "A cut from the hosts: I/O on B" B $PARTITION_BOUND "$work/lab_link" cut A hosts || return 1
  guest paths 60 A=connecting B=live/non-optimized || return 1
  [ "$(io "$(sock A)" group | python3 -c 'import json,sys; print(json.load(sys.stdin)["ana_groups"][0]["role"])')" = owner ] \
    && echo "   A still owns group 1" || { fail "A lost its lease while it reached Ceph"; return 1; }
  after "A's link to the hosts healed: I/O on A" A $BACK_BOUND "$work/lab_link" heal A hosts || return 1
  guest paths 60 A=live/optimized B=live/non-optimized || return 1

  echo "== A cut from Ceph (the hosts still reach it)"
  c=$(client A)
  t=$(now)
  lab_link cut A ceph
  role "A cut from Ceph: A reports group 1 lost (inaccessible)" A lost $((LEASE_MS / 1000)) "$t" || return 1
  role "A cut from Ceph: B owns group 1 (failover)" B owner $FAILOVER_BOUND "$t" || return 1
  fenced A "$c"
  guest paths 30 A=live/inaccessible B=live/optimized || return 1
  measure "A cut from Ceph: I/O on B" B 30 0 "$t" || return 1
  t=$(now)
  lab_link heal A ceph
  role "A's link to Ceph healed: A rejoins as standby" A standby 30 "$t" || return 1
  back_to_a "A's link to Ceph healed, A rejoined" "$(now)" || return 1

  echo "== A frozen (SIGSTOP) past its lease"
  c=$(client A)
  t=$(now)
  kill -STOP "${gpid[A]}"
  role "A frozen: B owns group 1 (failover)" B owner $FAILOVER_BOUND "$t" || { kill -CONT "${gpid[A]}"; return 1; }
  fenced A "$c"
  measure "A frozen: I/O on B" B 30 0 "$t" || { kill -CONT "${gpid[A]}"; return 1; }
  sleep 2
  t=$(now)
  kill -CONT "${gpid[A]}"
  role "A thawed: finds itself fenced, rejoins as standby" A standby 30 "$t" || return 1
  back_to_a "A thawed, rejoined" "$(now)" || return 1
}

standby_events() {
  local r
  for r in $(seq "$ROUNDS"); do
    echo "== round $r: SIGKILL gateway B (the standby)"
    after "round $r: B killed, I/O goes on on A" A 1 kill -KILL "${gpid[B]}" || return 1
    kill_gateway B
    guest paths 30 A=live/optimized B=connecting || return 1
    start_gateway B || { fail "gateway B did not restart"; return 1; }
    role "round $r: B restarted, standby" B standby 30 "$(now)" || return 1
    guest paths 30 A=live/optimized B=live/non-optimized || return 1
  done
  echo "== B cut from the hosts, then from Ceph, then frozen past the lease: A keeps group 1 and the I/O"
  lab_link cut B hosts
  guest paths 60 A=live/optimized B=connecting || return 1
  after "B cut from the hosts: I/O goes on on A" A 1 true || return 1
  lab_link heal B hosts
  guest paths 60 A=live/optimized B=live/non-optimized || return 1
  lab_link cut B ceph
  sleep $((LEASE_MS / 1000 + 2))
  after "B cut from Ceph for a lease: I/O goes on on A" A 1 true || return 1
  lab_link heal B ceph
  kill -STOP "${gpid[B]}"
  sleep $((LEASE_MS / 1000 + 2))
  after "B frozen for a lease: I/O goes on on A" A 1 true || { kill -CONT "${gpid[B]}"; return 1; }
  kill -CONT "${gpid[B]}"
  role "B thawed: standby" B standby 30 "$(now)" || return 1
  role "A owns group 1 all along" A owner 1 "$(now)" || return 1
  guest paths 60 A=live/optimized B=live/non-optimized || return 1
}

[ $status = 0 ] && { owner_events || fail "the owner's events stopped at their first failure"; }
[ $status = 0 ] && { standby_events || fail "the standby's events stopped at their first failure"; }
guest finish || true
wait "$guest" || fail "the guest script failed (rc $?)"
echo "== Ceph's blocklist:"
cephc ceph osd blocklist ls 2>&1 | sed 's/^/   /'
for g in A B; do echo "== gateway $g:"; io "$(sock $g)" group | sed 's/^/   /' | head -60; done
stop_gateways
echo "== measured (kernel $(cat "$NVMF_VM_CACHE/kernel-version"), lease $LEASE_MS ms, failback delay $FAILBACK_MS ms, KATO $KATO s, reconnect delay $RECONNECT s):"
printf '   %s\n' "${results[@]}"
[ $status = 0 ] && echo "GATEWAY GROUP INTEROP: PASS" || echo "GATEWAY GROUP INTEROP: FAIL"
exit $status
