# What the interop scripts driving guest shells share (sourced after setting $top, $vm, $jar):
#   interop_begin NAME   a work directory /var/tmp/nvmeof-NAME.XXXXXX ($work), $pids to end, the
#                        verdict ($status); at exit the guests in $work/*job stop, the processes in
#                        $pids end, and $work goes (kept, and said, when something failed)
#   fail WHAT / check WHAT   record a failure / a passed check
#   free_port            a free TCP port on 127.0.0.1
#   nvmeof ARGS...       our CLI
. "$top/test/kernel/guest.sh"
interop_begin() {
  work=$(mktemp -d -p /var/tmp "nvmeof-$1.XXXXXX")
  pids=()
  status=0
  trap interop_end EXIT
}
interop_end() {
  local j p
  for j in "$work"/*job; do [ -d "$j" ] && { "$vm/run-guest.sh" --stop "$j" >/dev/null 2>&1 || true; }; done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "(logs kept in $work)"; fi
}
fail() { echo "FAILED: $*"; status=1; }
check() { echo "check: $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
nvmeof() { java -jar "$jar" "$@"; }
