package io.nvmeof.nbd;

import io.nvmeof.initiator.BlockDevice;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** What every connection to one export shares: the device, the flags, and the order of partial-block writes. */
final class NbdExport {
    private final BlockDevice device;
    private final String name;
    private final byte[] nameBytes;
    private final String description;
    private final boolean readOnly;
    private final boolean multiConn;
    final int blockSize;
    final int preferredBlockSize;
    /** The most one request may move here, NBD_INFO_BLOCK_SIZE's maximum payload. */
    final int maxPayload;
    private final Set<NbdConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean shuttingDown;

    /** Block ranges [first, last] of partial-block writes now reading, changing and writing. */
    private long[] rmwFirst = new long[16];
    private long[] rmwLast = new long[16];
    private int rmwCount;
    /** Partial-block writes waiting for one that overlaps them. */
    private final ArrayDeque<NbdConnection.Op> rmwWaiting = new ArrayDeque<>();

    NbdExport(BlockDevice device, String name, String description, boolean readOnly, boolean multiConn) {
        this.device = device;
        this.name = name;
        this.nameBytes = name.getBytes(StandardCharsets.UTF_8);
        this.description = description;
        this.readOnly = readOnly;
        this.multiConn = multiConn;
        this.blockSize = device.blockSize();
        this.preferredBlockSize = Math.max(4096, blockSize);
        this.maxPayload = Math.max(preferredBlockSize, Math.min(device.maxTransferSize(), NbdProtocol.MAX_REQUEST));
    }

    BlockDevice device() {
        return device;
    }

    String name() {
        return name;
    }

    byte[] nameBytes() {
        return nameBytes;
    }

    String description() {
        return description;
    }

    boolean readOnly() {
        return readOnly || device.readOnly();
    }

    long size() {
        return device.size();
    }

    /** The transmission flags: what this export does (DF only once structured replies are on). */
    int transmissionFlags(boolean structured) {
        int f = NbdProtocol.TF_HAS_FLAGS | NbdProtocol.TF_SEND_FLUSH | NbdProtocol.TF_SEND_FUA;
        if (readOnly()) {
            f |= NbdProtocol.TF_READ_ONLY;
        } else {
            f |= NbdProtocol.TF_SEND_TRIM | NbdProtocol.TF_SEND_WRITE_ZEROES;
        }
        if (structured) {
            f |= NbdProtocol.TF_SEND_DF; // a read is always one chunk
        }
        if (multiConn) {
            f |= NbdProtocol.TF_CAN_MULTI_CONN;
        }
        return f;
    }

    /** Whether {@code asked} (UTF-8 bytes) names this export. */
    boolean named(byte[] asked, int from, int length) {
        return java.util.Arrays.equals(asked, from, from + length, nameBytes, 0, nameBytes.length);
    }

    void opened(NbdConnection c) {
        connections.add(c);
    }

    void closed(NbdConnection c) {
        connections.remove(c);
    }

    int active() {
        return connections.size();
    }

    boolean shuttingDown() {
        return shuttingDown;
    }

    /** The server stops: options from now on are answered ERR_SHUTDOWN (the server ends each connection). */
    void shutdown() {
        shuttingDown = true;
    }

    /**
     * A partial-block write (or a zeroing of part of a block) may start on blocks [first, last]
     * unless another one holds one of them; then it waits, and {@link #rmwDone} starts it.
     */
    synchronized boolean rmwStart(NbdConnection.Op op, long first, long last) {
        if (overlaps(first, last)) {
            rmwWaiting.addLast(op);
            return false;
        }
        hold(first, last);
        return true;
    }

    private boolean overlaps(long first, long last) {
        for (int i = 0; i < rmwCount; i++) {
            if (first <= rmwLast[i] && rmwFirst[i] <= last) {
                return true;
            }
        }
        return false;
    }

    private void hold(long first, long last) {
        if (rmwCount == rmwFirst.length) {
            rmwFirst = java.util.Arrays.copyOf(rmwFirst, rmwCount * 2);
            rmwLast = java.util.Arrays.copyOf(rmwLast, rmwCount * 2);
        }
        rmwFirst[rmwCount] = first;
        rmwLast[rmwCount] = last;
        rmwCount++;
    }

    /** The partial-block write on [first, last] is done: waiting ones whose blocks are now free start, in order. */
    void rmwDone(long first, long last) {
        NbdConnection.Op[] ready = null;
        int n = 0;
        synchronized (this) {
            for (int i = 0; i < rmwCount; i++) {
                if (rmwFirst[i] == first && rmwLast[i] == last) {
                    rmwCount--;
                    rmwFirst[i] = rmwFirst[rmwCount];
                    rmwLast[i] = rmwLast[rmwCount];
                    break;
                }
            }
            int waiting = rmwWaiting.size();
            for (int i = 0; i < waiting; i++) {
                NbdConnection.Op op = rmwWaiting.pollFirst();
                if (!overlaps(op.rmwFirst, op.rmwLast)) {
                    hold(op.rmwFirst, op.rmwLast);
                    if (ready == null) {
                        ready = new NbdConnection.Op[waiting];
                    }
                    ready[n++] = op;
                } else {
                    rmwWaiting.addLast(op);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            ready[i].rmwGranted();
        }
    }
}
