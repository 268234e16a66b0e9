# What the two-gateway interop scripts share (sourced by run-multipath-interop.sh and
# run-gateway-group-interop.sh after setting $top, $jar, $work and $pids): our gateways as
# processes, the guest's command channel, and the measurements held to bounds.
#
# Gateways: for each name G (A, B), $work/g.json is its configuration (g: the name in lower case),
# ${gw_listen[G]} the address it listens on (ADDR:PORT, as it prints it), ${gw_launch[G]} what
# runs it (empty, or "ip netns exec NS"); it serves its management API on $work/g.sock.
declare -A gw_listen gw_launch gpid runs
# start_gateway G: a fresh process, as users start it (paranoid leak detection on); waits until
# it listens and its management API serves
start_gateway() {
  local g=$1 lc n
  lc=$(echo "$g" | tr AB ab)
  n=$(( ${runs[$g]:-0} + 1 )); runs[$g]=$n
  rm -f "$work/$lc.sock"
  # shellcheck disable=SC2086 # the launcher is words
  ${gw_launch[$g]:-} java -Dio.netty.leakDetection.level=paranoid -jar "$jar" target --config "$work/$lc.json" \
    --rpc-socket "$work/$lc.sock" >"$work/$lc.$n.out" 2>"$work/$lc.$n.err" &
  gpid[$g]=$!
  pids+=(${gpid[$g]})
  for _ in $(seq 600); do
    grep -q "listening on tcp://${gw_listen[$g]}" "$work/$lc.$n.out" 2>/dev/null && [ -S "$work/$lc.sock" ] && return 0
    kill -0 "${gpid[$g]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "gateway $g did not start:"; cat "$work/$lc.$n.err"; return 1
}
# group_gateway_config SELF TRADDR PORT CNTLID_MIN CNTLID_MAX: the configuration of gateway SELF
# (a or b) of gateway group $GW_GROUP over image $GW_IMAGE of pool rbd of the cluster $CEPH_CONF
# names, serving $NQN (serial $GW_SERIAL) on TRADDR:PORT, ANA group 1 preferred on a; members a and
# b at $GW_ADDR_A and $GW_ADDR_B (for people: get_gateway_group shows them); $GW_GROUP_EXTRA, if
# set, adds fields to gateway_group (", \"failback_delay_ms\": 5000")
group_gateway_config() {
  cat <<JSON
{"rbd_clusters": [{"name": "lab", "conf": "$CEPH_CONF"}],
 "gateway_group": {"name": "$GW_GROUP", "self": "$1", "cluster": "lab",
                   "members": [{"name": "a", "address": "$GW_ADDR_A"}, {"name": "b", "address": "$GW_ADDR_B"}],
                   "ana_groups": [{"grpid": 1, "preferred": "a"}]${GW_GROUP_EXTRA:-}},
 "ports": [{"portid": 1, "traddr": "$2", "trsvcid": $3, "subsystems": ["$NQN"]}],
 "subsystems": [{"nqn": "$NQN", "serial": "$GW_SERIAL", "gateways": true, "cntlid_min": $4, "cntlid_max": $5,
                 "namespaces": [{"nsid": 1, "backend": "rbd", "cluster": "lab", "pool": "rbd", "image": "$GW_IMAGE",
                                 "ana_grpid": 1}]}]}
JSON
}
sock() { echo "$work/$(echo "$1" | tr AB ab).sock"; }
kill_gateway() { kill -KILL "${gpid[$1]}"; wait "${gpid[$1]}" 2>/dev/null || true; }
# stop_gateways: SIGTERM to both, each held to a clean stop and no leaked buffer
stop_gateways() {
  local g lc
  for g in A B; do kill -TERM "${gpid[$g]}" 2>/dev/null; wait "${gpid[$g]}" 2>/dev/null || true; done
  pids=()
  for g in A B; do
    lc=$(echo "$g" | tr AB ab)
    grep -q "nvmeof target stopped" "$work/$lc.${runs[$g]}.out" || fail "gateway $g did not stop cleanly"
  done
  if grep -l "LEAK:" "$work"/*.err; then fail "a gateway leaked buffers"; fi
}
io() { python3 "$top/test/kernel/gateway-io.py" "$@"; }

# The guest's commands: guest_send writes one; guest_post hands it over (cmd.N appears whole, by
# a rename); guest_ack waits for the guest's answer. $job is the guest's job directory, $guest
# the PID of its run-guest.sh.
n=0
guest_send() {
  n=$((n + 1))
  echo "$*" >"$job/.cmd"
}
guest_post() { mv "$job/.cmd" "$job/cmd.$n"; }
guest_ack() {
  for _ in $(seq 1800); do
    grep -q "^ACK $n ok" "$job/out.log" 2>/dev/null && return 0
    grep -q "^ACK $n FAIL" "$job/out.log" 2>/dev/null && { fail "guest: $(cat "$job/cmd.$n")"; return 1; }
    kill -0 "$guest" 2>/dev/null || { fail "the guest ended waiting for: $(cat "$job/cmd.$n")"; return 1; }
    sleep 0.1
  done
  fail "the guest did not answer: $(cat "$job/cmd.$n")"; return 1
}
guest() { guest_send "$@" && guest_post && guest_ack; }
# await_load: waits until the guest's load runs (it prints LOAD-RUNNING), or the guest ends
await_load() {
  for _ in $(seq 6000); do
    grep -q "^LOAD-RUNNING" "$job/out.log" 2>/dev/null && break
    kill -0 "$guest" 2>/dev/null || break
    sleep 0.2
  done
  grep -q "^LOAD-RUNNING" "$job/out.log" || fail "the guest did not start its load"
}
# now: the time, for an event about to happen
now() { date +%s.%N; }
declare -a results
# judge WHAT BOUND RC OUTPUT: record a measurement, held to BOUND
judge() {
  local what=$1 bound=$2 rc=$3 t=$4
  if [ "$rc" = 0 ]; then
    results+=("$what: $t s (bound $bound s)")
    echo "   $what: $t s"
    awk -v t="$t" -v b="$bound" 'BEGIN { exit !(t <= b) }' || { fail "$what took $t s, over $bound s"; return 1; }
  else
    fail "$what: $t"; results+=("$what: $t"); return 1
  fi
}
# measure WHAT GATEWAY BOUND FROM SINCE: seconds from SINCE until GATEWAY runs more I/O than
# FROM (reads and writes of namespace 1)
measure() {
  local t rc=0
  t=$(io "$(sock "$2")" wait-io 120 "$4" "$5") || rc=$?
  judge "$1" "$3" $rc "$t"
}
# after WHAT GATEWAY BOUND CMD...: seconds from just before CMD until GATEWAY runs I/O
after() {
  local what=$1 g=$2 bound=$3 t rc=0; shift 3
  t=$(io "$(sock "$g")" after 120 "$@") || rc=$?
  judge "$what" "$bound" $rc "$t"
}
# idle GATEWAY: it runs no I/O for 2 s (the host uses the optimized path alone)
idle() {
  local why
  why=$(io "$(sock "$1")" idle 2) && echo "   none on $1" || { fail "I/O on $1 while the other is optimized: $why"; return 1; }
}
