package io.nvmeof.initiator;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Reservation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A namespace's persistent reservation, as the host that holds this device sees it (NVMe Base
 * 2.x, 8.19): Reservation Register, Acquire, Release and Report. The target knows the host by its
 * Host Identifier, so every controller (every path) of one host is one registrant. A command the
 * reservation refuses fails with {@link NvmeStatusException} whose status is Reservation Conflict.
 *
 * <p>The raw forms take the fields as the specification (and nvme-cli) name them; the others are
 * the usual steps: register a key, acquire a type, preempt another host (with abort to fence it),
 * release, clear.
 */
public final class Reservations {
    /** Reservation types (RTYPE). */
    public enum Type {
        WRITE_EXCLUSIVE(1), EXCLUSIVE_ACCESS(2), WRITE_EXCLUSIVE_REGISTRANTS_ONLY(3),
        EXCLUSIVE_ACCESS_REGISTRANTS_ONLY(4), WRITE_EXCLUSIVE_ALL_REGISTRANTS(5), EXCLUSIVE_ACCESS_ALL_REGISTRANTS(6);

        public final int code;

        Type(int code) {
            this.code = code;
        }

        /** The type of RTYPE {@code code}, or null for 0 (no reservation) and values the spec does not define. */
        public static Type of(int code) {
            return code >= 1 && code <= 6 ? values()[code - 1] : null;
        }
    }

    /**
     * A registrant in the report.
     *
     * @param cntlid  its controller's ID, FFFFh where the target keeps registrants per host
     * @param holds   whether it holds the reservation
     * @param hostId  its 128-bit Host Identifier
     */
    public record Registrant(int cntlid, boolean holds, long key, UUID hostId) {
    }

    /**
     * Reservation Report (extended data structure).
     *
     * @param type          the reservation's type, or null when there is none
     * @param ptpl          Persist Through Power Loss is on
     * @param registrants   as many as fitted the report (all, unless more than {@link #MAX_REPORTED})
     * @param registered    how many hosts are registered (REGCTL)
     */
    public record Report(int generation, Type type, boolean ptpl, List<Registrant> registrants, int registered) {
        public Report {
            registrants = List.copyOf(registrants);
        }
    }

    /** Registrants one report reads at most. */
    public static final int MAX_REPORTED = 63;
    private static final int HEADER = Reservation.EXTENDED_HEADER;
    private static final int ENTRY = Reservation.EXTENDED_ENTRY;

    private final IoSink sink;
    private final int nsid;

    Reservations(IoSink sink, int nsid) {
        this.sink = sink;
        this.nsid = nsid;
    }

    /** Reservation Register: {@code rrega} 0 register {@code nrkey}, 1 unregister, 2 replace {@code crkey} by {@code nrkey}. */
    public CompletableFuture<Void> registerAsync(int rrega, boolean iekey, int cptpl, long crkey, long nrkey) {
        return keys(NvmOpcode.RESERVATION_REGISTER, "Reservation Register",
                Reservation.cdw10(rrega, iekey, cptpl, true), crkey, nrkey);
    }

    /** Reservation Acquire: {@code racqa} 0 acquire, 1 preempt the holders of {@code prkey}, 2 preempt and abort. */
    public CompletableFuture<Void> acquireAsync(int racqa, boolean iekey, Type type, long crkey, long prkey) {
        return keys(NvmOpcode.RESERVATION_ACQUIRE, "Reservation Acquire",
                Reservation.cdw10(racqa, iekey, type.code, false), crkey, prkey);
    }

    /** Reservation Release: {@code rrela} 0 release the reservation of {@code type}, 1 clear it and every registration. */
    public CompletableFuture<Void> releaseAsync(int rrela, boolean iekey, Type type, long crkey) {
        return keys(NvmOpcode.RESERVATION_RELEASE, "Reservation Release",
                Reservation.cdw10(rrela, iekey, type == null ? 0 : type.code, false), crkey);
    }

    private CompletableFuture<Void> keys(NvmOpcode op, String name, int cdw10, long... keys) {
        ByteBuffer data = ByteBuffer.allocateDirect(keys.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (long k : keys) {
            data.putLong(k);
        }
        data.flip();
        Command c = new Command(name).opcode(op.code).nsid(nsid).cdw(10, cdw10).dataOut(data, data.remaining());
        sink.submitIo(c);
        return c.thenAccept(x -> { });
    }

    /** Reservation Report, in the extended data structure (128-bit Host Identifiers). */
    public CompletableFuture<Report> reportAsync() {
        int len = HEADER + ENTRY * MAX_REPORTED;
        ByteBuffer page = ByteBuffer.allocateDirect(len).order(ByteOrder.LITTLE_ENDIAN);
        Command c = new Command("Reservation Report").opcode(NvmOpcode.RESERVATION_REPORT.code).nsid(nsid)
                .cdw(10, len / 4 - 1).cdw(11, 1).dataIn(page, len);
        sink.submitIo(c);
        return c.thenApply(x -> parse(page));
    }

    /** Parses a Reservation Report's extended data structure. */
    static Report parse(ByteBuffer page) {
        int generation = page.getInt(0);
        int type = page.get(4) & 0xff;
        int regctl = page.getShort(5) & 0xffff;
        boolean ptpl = (page.get(9) & 1) != 0;
        List<Registrant> regs = new ArrayList<>();
        for (int i = 0; i < regctl && HEADER + (i + 1) * ENTRY <= page.capacity(); i++) {
            int at = HEADER + i * ENTRY;
            long msb = Long.reverseBytes(page.getLong(at + 16));
            long lsb = Long.reverseBytes(page.getLong(at + 24));
            regs.add(new Registrant(page.getShort(at) & 0xffff, (page.get(at + 2) & 1) != 0, page.getLong(at + 8),
                    new UUID(msb, lsb)));
        }
        return new Report(generation, Type.of(type), ptpl, regs, regctl);
    }

    /** Registers this host with {@code key}. */
    public void register(long key) throws IOException {
        sync(() -> registerAsync(Reservation.REGISTER, false, Reservation.CPTPL_NO_CHANGE, 0, key), "register");
    }

    /** Unregisters this host (releasing a reservation it holds alone). */
    public void unregister(long key) throws IOException {
        sync(() -> registerAsync(Reservation.UNREGISTER, false, Reservation.CPTPL_NO_CHANGE, key, 0), "unregister");
    }

    /** Replaces this host's key. */
    public void replace(long oldKey, long newKey) throws IOException {
        sync(() -> registerAsync(Reservation.REPLACE, false, Reservation.CPTPL_NO_CHANGE, oldKey, newKey), "replace key");
    }

    /** Acquires a reservation of {@code type}, registered with {@code key}. */
    public void acquire(long key, Type type) throws IOException {
        sync(() -> acquireAsync(Reservation.ACQUIRE, false, type, key, 0), "acquire");
    }

    /**
     * Preempts the hosts registered with {@code victimKey} (their registrations go, and the
     * reservation with them if they held it), taking a reservation of {@code type}; with
     * {@code abort}, the target also aborts the commands it still holds for them: fencing.
     */
    public void preempt(long key, long victimKey, Type type, boolean abort) throws IOException {
        sync(() -> acquireAsync(abort ? Reservation.PREEMPT_AND_ABORT : Reservation.PREEMPT, false, type, key, victimKey),
                "preempt");
    }

    /** Releases the reservation of {@code type} this host holds. */
    public void release(long key, Type type) throws IOException {
        sync(() -> releaseAsync(Reservation.RELEASE, false, type, key), "release");
    }

    /** Clears the reservation and every registration. */
    public void clear(long key) throws IOException {
        sync(() -> releaseAsync(Reservation.CLEAR, false, null, key), "clear");
    }

    public Report report() throws IOException {
        sink.checkBlockingAllowed();
        return Controller.await(reportAsync(), "reservation report of nsid " + Integer.toUnsignedString(nsid),
                sink.callerTimeoutMillis());
    }

    private void sync(Supplier<CompletableFuture<Void>> op, String what) throws IOException {
        sink.checkBlockingAllowed();
        Controller.await(op.get(), "reservation " + what + " on nsid " + Integer.toUnsignedString(nsid),
                sink.callerTimeoutMillis());
    }
}
