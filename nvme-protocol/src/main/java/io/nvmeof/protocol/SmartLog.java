package io.nvmeof.protocol;

/**
 * The SMART / Health Information log page (NVMe Base 2.0, 5.16.1.3, Figure 207), 512 bytes:
 * the fields this project reports. Data units are thousands of 512-byte units, rounded up.
 */
public final class SmartLog extends Flyweight {
    public static final int SIZE = 512;
    public static final int CRITICAL_WARNING_OFFSET = 0;
    public static final int COMPOSITE_TEMPERATURE_OFFSET = 1;
    public static final int AVAILABLE_SPARE_OFFSET = 3;
    public static final int AVAILABLE_SPARE_THRESHOLD_OFFSET = 4;
    public static final int PERCENTAGE_USED_OFFSET = 5;
    public static final int DATA_UNITS_READ_OFFSET = 32;
    public static final int DATA_UNITS_WRITTEN_OFFSET = 48;
    public static final int HOST_READ_COMMANDS_OFFSET = 64;
    public static final int HOST_WRITE_COMMANDS_OFFSET = 80;
    public static final int ERROR_LOG_ENTRIES_OFFSET = 176;

    @Override
    public int length() {
        return SIZE;
    }

    /** Data units (1000 x 512 bytes, rounded up) for {@code bytes}. */
    public static long dataUnits(long bytes) {
        return (bytes + 511_999) / 512_000;
    }

    /** Kelvin. */
    public int compositeTemperature() {
        return u16(COMPOSITE_TEMPERATURE_OFFSET);
    }

    public SmartLog compositeTemperature(int kelvin) {
        put16(COMPOSITE_TEMPERATURE_OFFSET, kelvin);
        return this;
    }

    /** Percent. */
    public int availableSpare() {
        return u8(AVAILABLE_SPARE_OFFSET);
    }

    public SmartLog availableSpare(int percent, int thresholdPercent) {
        put8(AVAILABLE_SPARE_OFFSET, percent);
        put8(AVAILABLE_SPARE_THRESHOLD_OFFSET, thresholdPercent);
        return this;
    }

    public int availableSpareThreshold() {
        return u8(AVAILABLE_SPARE_THRESHOLD_OFFSET);
    }

    /** The low 64 bits of the 128-bit Data Units Read. */
    public long dataUnitsRead() {
        return u64(DATA_UNITS_READ_OFFSET);
    }

    public long dataUnitsWritten() {
        return u64(DATA_UNITS_WRITTEN_OFFSET);
    }

    public long hostReadCommands() {
        return u64(HOST_READ_COMMANDS_OFFSET);
    }

    public long hostWriteCommands() {
        return u64(HOST_WRITE_COMMANDS_OFFSET);
    }

    /** The I/O counters: bytes read and written (stored as data units) and commands. */
    public SmartLog io(long bytesRead, long bytesWritten, long readCommands, long writeCommands) {
        put64(DATA_UNITS_READ_OFFSET, dataUnits(bytesRead));
        put64(DATA_UNITS_WRITTEN_OFFSET, dataUnits(bytesWritten));
        put64(HOST_READ_COMMANDS_OFFSET, readCommands);
        put64(HOST_WRITE_COMMANDS_OFFSET, writeCommands);
        return this;
    }

    /** The low 64 bits of Number of Error Information Log Entries (over the controller's life). */
    public long errorLogEntries() {
        return u64(ERROR_LOG_ENTRIES_OFFSET);
    }

    public SmartLog errorLogEntries(long n) {
        put64(ERROR_LOG_ENTRIES_OFFSET, n);
        return this;
    }
}
