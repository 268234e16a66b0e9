package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Failed commands counted by status; a status's adder is made the first time it is seen. */
final class ErrorCounts {
    /** Keyed by SCT << 8 | SC. */
    private final Map<Integer, LongAdder> counts = new ConcurrentHashMap<>();

    void count(Status status) {
        counts.computeIfAbsent(status.sct() << 8 | status.sc(), k -> new LongAdder()).increment();
    }

    /** The counts so far by status, named {@code sct/sc} in hex (e.g. {@code 0x0/0x80}, LBA Out of Range). */
    public Map<String, Long> byStatus() {
        Map<String, Long> m = new TreeMap<>();
        counts.forEach((key, n) -> m.put("0x" + Integer.toHexString(key >> 8) + "/0x" + Integer.toHexString(key & 0xff),
                n.sum()));
        return m;
    }
}
