# Host side of test/kernel/guest-shell.sh (sourced): boot a guest that runs the commands given.
#   guest_boot JOB [run-guest.sh options...]   boots it in the background, waits for READY
#   gsh [-t SECONDS] SCRIPT                     runs SCRIPT (bash) in the guest: prints its
#                                               output, returns its exit status (124: no answer)
#   guest_stop JOB                              ends it
# Needs $vm (test/vm) and $top (the repository).
guest_boot() {
  local job=$1; shift
  GUEST_JOB=$job
  mkdir -p "$job"
  echo 0 >"$job.n"
  "$vm/run-guest.sh" --job "$job" "$@" "$top/test/kernel/guest-shell.sh" >"$job.console" 2>&1 &
  GUEST_PID=$!
  for _ in $(seq 1800); do
    grep -q "^READY" "$job/out.log" 2>/dev/null && { grep -m1 "^kernel" "$job/out.log"; return 0; }
    kill -0 "$GUEST_PID" 2>/dev/null || break
    sleep 0.2
  done
  echo "the guest did not start:"; tail -20 "$job.console" "$job/out.log" 2>/dev/null; return 1
}
gsh() {
  local t=300 n rc
  [ "$1" = -t ] && { t=$2; shift 2; }
  # the count is kept in a file: gsh also runs in command substitutions (subshells)
  n=$(( $(cat "$GUEST_JOB.n") + 1 )); echo $n >"$GUEST_JOB.n"
  printf '%s\n' "$*" >"$GUEST_JOB/.cmd" && mv "$GUEST_JOB/.cmd" "$GUEST_JOB/cmd.$n"
  for _ in $(seq $((t * 10))); do
    rc=$(sed -n "s/^ACK $n \([0-9]*\)\r\{0,1\}$/\1/p" "$GUEST_JOB/out.log" 2>/dev/null)
    if [ -n "$rc" ]; then cat "$GUEST_JOB/res.$n"; return "$rc"; fi
    kill -0 "$GUEST_PID" 2>/dev/null || { echo "(the guest ended)"; return 125; }
    sleep 0.1
  done
  echo "(no answer from the guest in $t s)"; return 124
}
guest_stop() {
  "$vm/run-guest.sh" --stop "$1" >/dev/null 2>&1 || true
  wait "$GUEST_PID" 2>/dev/null || true
}
