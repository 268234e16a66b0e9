package io.nvmeof.fabric.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where memory is registered: regions of one domain may be used by every connection of that
 * domain (a device's protection domain in verbs). Registration is expensive on real hardware:
 * register long-lived pools once, not buffers per command.
 */
public interface ProtectionDomain {
    /** Registers the whole of {@code directBuffer} with {@code access} ({@link MemoryRegion} flags). */
    MemoryRegion register(ByteBuffer directBuffer, int access) throws IOException;

    /** Deregisters {@code mr}; a peer that names its rkey afterwards fails its connection. */
    void deregister(MemoryRegion mr);
}
