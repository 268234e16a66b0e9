# Sourced by the bench scripts that run our target from the CLI jar ($JAR).

# our_target LOG ARGS...: starts `java -jar $JAR target ARGS...` in the background, its output in
# LOG; sets TARGET_PID and returns once it listens (else shows LOG and exits).
our_target() {
    local log=$1
    shift
    java -jar "$JAR" target "$@" > "$log" 2>&1 &
    TARGET_PID=$!
    for _ in $(seq 300); do
        grep -q "listening on" "$log" && return 0
        sleep 0.1
    done
    echo "the target did not start:"; cat "$log"; exit 1
}

# stop_our_target: ends the target our_target started, if any.
stop_our_target() {
    if [ -n "${TARGET_PID:-}" ]; then
        kill "$TARGET_PID" 2>/dev/null || true
        wait "$TARGET_PID" 2>/dev/null || true
        TARGET_PID=
    fi
}
