package io.nvmeof.protocol;

/** Feature identifiers for Get/Set Features (NVMe Base 2.0, Figure 317). */
public final class FeatureId {
    public static final int ARBITRATION = 0x01;
    public static final int POWER_MANAGEMENT = 0x02;
    public static final int TEMPERATURE_THRESHOLD = 0x04;
    public static final int ERROR_RECOVERY = 0x05;
    public static final int VOLATILE_WRITE_CACHE = 0x06;
    public static final int NUMBER_OF_QUEUES = 0x07;
    public static final int INTERRUPT_COALESCING = 0x08;
    public static final int WRITE_ATOMICITY = 0x0A;
    public static final int ASYNC_EVENT_CONFIG = 0x0B;
    public static final int KEEP_ALIVE_TIMER = 0x0F;
    public static final int HOST_IDENTIFIER = 0x81;
    /** Reservation Notification Mask (per namespace): CDW11 bits 1..3 mask the three notice types. */
    public static final int RESERVATION_NOTIFICATION_MASK = 0x82;
    /** Reservation Persistence (per namespace): CDW11 bit 0, Persist Through Power Loss. */
    public static final int RESERVATION_PERSISTENCE = 0x83;

    private FeatureId() {
    }
}
