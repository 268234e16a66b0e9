package io.nvmeof.protocol;

/** Identify CNS values (NVMe Base 2.0, Figure 273). */
public final class IdentifyCns {
    public static final int NAMESPACE = 0x00;
    public static final int CONTROLLER = 0x01;
    public static final int ACTIVE_NAMESPACE_LIST = 0x02;
    public static final int NAMESPACE_ID_DESCRIPTORS = 0x03;
    /** Identify data and the active namespace list are 4096 bytes. */
    public static final int DATA_SIZE = 4096;

    private IdentifyCns() {
    }
}
