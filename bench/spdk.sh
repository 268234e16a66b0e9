# Sourced by the bench scripts: SPDK's NVMe/TCP target as the yardstick.
# Needs SPDK (built tree), PORT and SPDK_NQN set by the caller.

# spdk_target SOCKET LOG MEMORY-FLAGS...: starts nvmf_tgt on core 0 with a 512 MiB malloc
# namespace of 4 KiB blocks in subsystem $SPDK_NQN on NVMe/TCP 127.0.0.1:$PORT; sets SPDK_PID.
# With SPDK_AIO_FILE set, the namespace is that file through an aio bdev (O_DIRECT, 4 KiB blocks).
spdk_target() {
    local sock=$1 log=$2
    shift 2
    rm -f "$sock"
    taskset -c 0 "$SPDK/build/bin/nvmf_tgt" -m 0x1 "$@" --no-pci -r "$sock" > "$log" 2>&1 &
    SPDK_PID=$!
    for _ in $(seq 300); do
        [ -S "$sock" ] && break
        sleep 0.1
    done
    local rpc=(python3 "$SPDK/scripts/rpc.py" -s "$sock")
    "${rpc[@]}" nvmf_create_transport -t TCP -q 256 > /dev/null
    local bdev=Malloc0
    if [ -n "${SPDK_AIO_FILE:-}" ]; then
        bdev=Aio0
        "${rpc[@]}" bdev_aio_create "$SPDK_AIO_FILE" Aio0 4096 > /dev/null
    else
        "${rpc[@]}" bdev_malloc_create -b Malloc0 512 4096 > /dev/null
    fi
    "${rpc[@]}" nvmf_create_subsystem "$SPDK_NQN" -a -s SPDK00000000000001 > /dev/null
    "${rpc[@]}" nvmf_subsystem_add_ns "$SPDK_NQN" $bdev > /dev/null
    "${rpc[@]}" nvmf_subsystem_add_listener "$SPDK_NQN" -t tcp -a 127.0.0.1 -s "$PORT" -f ipv4 > /dev/null
}
