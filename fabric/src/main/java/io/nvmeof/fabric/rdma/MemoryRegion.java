package io.nvmeof.fabric.rdma;

import java.nio.ByteBuffer;

/**
 * A registered (pinned, keyed) direct buffer. {@link #address()} is the buffer's native address,
 * which is what a peer names in a keyed SGL together with {@link #rkey()}.
 */
public final class MemoryRegion {
    /** Access flags, numbered as {@code ibv_access_flags}. */
    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 2;
    public static final int REMOTE_READ = 4;

    private final ProtectionDomain pd;
    private final ByteBuffer buffer;
    private final long address;
    private final int lkey;
    private final int rkey;
    private final int access;
    /** The provider's native handle (ibv_mr*, IbvMr), if any. */
    final Object handle;
    private volatile boolean deregistered;

    public MemoryRegion(ProtectionDomain pd, ByteBuffer buffer, long address, int lkey, int rkey, int access,
                        Object handle) {
        this.pd = pd;
        this.buffer = buffer;
        this.address = address;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
        this.handle = handle;
    }

    public ProtectionDomain pd() { return pd; }
    /** The registered memory: position 0, capacity = {@link #length()}. Do not change its position from two threads. */
    public ByteBuffer buffer() { return buffer; }
    public long address() { return address; }
    public int length() { return buffer.capacity(); }
    public int lkey() { return lkey; }
    public int rkey() { return rkey; }
    public int access() { return access; }

    public Object handle() { return handle; }

    /** Providers call this as they deregister the region: a later post of it throws. */
    public void markDeregistered() { deregistered = true; }

    /**
     * Checks a local work request's use of this region, as the adapter would (a local
     * protection error): the region belongs to {@code domain}, the range lies inside it, and
     * the post is on the connection's loop ({@code onLoop}).
     */
    public void checkLocal(ProtectionDomain domain, int offset, int length, boolean onLoop) {
        if (pd != domain) {
            throw new IllegalArgumentException("region of another protection domain: " + this);
        }
        if (deregistered) {
            throw new IllegalStateException("use of a deregistered region: " + this);
        }
        if (offset < 0 || length < 0 || offset > length() - length) {
            throw new IllegalArgumentException("local protection error: " + offset + "+" + length + " outside " + this);
        }
        if (!onLoop) {
            throw new IllegalStateException("post from outside the connection's event loop");
        }
    }

    /** Whether {@code length} bytes at {@code address} lie inside this region. */
    public boolean contains(long at, long len) {
        return len >= 0 && at >= address && at - address <= length() - len;
    }

    @Override
    public String toString() {
        return "MemoryRegion{addr=0x" + Long.toHexString(address) + " len=" + length() + " lkey=0x"
                + Integer.toHexString(lkey) + " rkey=0x" + Integer.toHexString(rkey) + " access=" + access + "}";
    }
}
