package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Reservation;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The reservation commands on the wire: a host registers, reads the report, acquires and releases. */
class ReservationCommandsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:resv";

    private static byte[] keys(long a, long b) {
        ByteBuffer k = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        k.putLong(a).putLong(b);
        return k.array();
    }

    private static Status send(RawHost io, int opcode, int cdw10, byte[] data) throws IOException {
        return io.command(q -> q.opcode(opcode).psdt(1).nsid(1).cdw(10, cdw10).sgl(0, data.length, Sgl.IN_CAPSULE), data).cqe().status();
    }

    /** Reservation Report (EDS when {@code eds}) of 4 KiB; the data, or null with the status in {@code status[0]}. */
    private static ByteBuffer report(RawHost io, boolean eds, Status[] status) throws IOException {
        io.send(io.capsule(q -> q.opcode(NvmOpcode.RESERVATION_REPORT.code).psdt(1).nsid(1).cdw(10, 4096 / 4 - 1)
                .cdw(11, eds ? 1 : 0).sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
        ByteBuffer data = null;
        while (true) {
            RawHost.Received r = io.receive();
            if (r.type() == PduType.C2H_DATA) {
                data = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
                data.put(0, r.bytes(), r.u8(3), 4096);
                continue;
            }
            CompletionQueueEntry c = r.cqe();
            status[0] = c.status();
            return data;
        }
    }

    @Test
    void registerReportAcquireRelease() throws Exception {
        try (Target target = new Target()) {
            InetSocketAddress address = serve(target, new RamBackend(1 << 20, 4096));
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                int cntlid = admin.bringUpAdmin(NQN);
                io.bringUpIo(NQN, 1, cntlid);
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xabcd)));
                Status[] st = new Status[1];
                assertEquals(null, report(io, false, st));
                assertEquals(Status.HOST_ID_INCONSISTENT, st[0], "a fabrics host's ID needs the extended structure");
                ByteBuffer d = report(io, true, st);
                assertEquals(Status.SUCCESS, st[0]);
                assertEquals(1, d.getInt(0), "generation");
                assertEquals(0, d.get(4), "no reservation yet");
                assertEquals(1, d.getShort(5), "one registrant");
                assertEquals(0xabcdL, d.getLong(64 + 8));
                ByteBuffer id = ByteBuffer.allocate(16);
                id.putLong(RawHost.HOST_ID.getMostSignificantBits()).putLong(RawHost.HOST_ID.getLeastSignificantBits());
                assertEquals(id.flip(), d.slice(64 + 16, 16), "the Host Identifier as the host sent it");
                // Acquire Exclusive Access (RTYPE 2), then the report shows us holding it
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_ACQUIRE.code, 2 << 8, keys(0xabcd, 0)));
                d = report(io, true, st);
                assertEquals(2, d.get(4));
                assertEquals(1, d.get(64 + 2), "RCSTS: holds it");
                assertEquals(Status.RESERVATION_CONFLICT,
                        send(io, NvmOpcode.RESERVATION_RELEASE.code, 2 << 8, keys(0x1234, 0)), "the wrong key");
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_RELEASE.code, 2 << 8, keys(0xabcd, 0)));
                assertEquals(0, report(io, true, st).get(4));
                assertEquals(Status.INVALID_FIELD, send(io, NvmOpcode.RESERVATION_REGISTER.code, 0, new byte[8]),
                        "Register with 8 bytes of keys");
            }
        }
    }

    static ByteBuffer reservationLog(RawHost admin) throws IOException {
        admin.send(admin.capsule(q -> {
            q.opcode(AdminOpcode.GET_LOG_PAGE.code).psdt(1).sgl(0, 64, Sgl.TCP_TRANSPORT);
            LogPage.request(q, LogPage.RESERVATION_NOTIFICATION, 0, 64, false);
        }, null));
        RawHost.Received data = admin.receive();
        assertEquals(PduType.C2H_DATA, data.type());
        ByteBuffer out = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        out.put(0, data.bytes(), data.u8(Pdu.PDO_OFFSET), 64);
        assertEquals(Status.SUCCESS, admin.receive().cqe().status());
        return out;
    }

    /**
     * A write whose data is still on its way when another host preempts this one with abort never
     * reaches the storage: its data arrives, and it completes with Command Aborted due to Preempt
     * and Abort. The preempted host then finds a Registration Preempted notice, announced by an
     * asynchronous event, in its Reservation Notification log; the log empties as it is read.
     */
    @Test
    void preemptAndAbortStopsAWriteWaitingForItsDataAndTellsTheHost() throws Exception {
        RamBackend ram = new RamBackend(1 << 20, 4096);
        try (Target target = new Target()) {
            try (TwoHosts h = new TwoHosts(serve(target, ram))) {
                RawHost admin = h.admin;
                RawHost io = h.io;
                RawHost other = h.other;
                admin.send(admin.capsule(q -> q.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1), null));
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xaaaa)));
                assertEquals(Status.SUCCESS, send(other, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xbbbb)));
                // this host holds Write Exclusive (RTYPE 1): its write is let in
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_ACQUIRE.code, 1 << 8, keys(0xaaaa, 0)));

                io.send(io.capsule(q -> q.blocks(NvmOpcode.WRITE, 0, 1).psdt(1).nsid(1).sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
                RawHost.Received r2t = io.receive();
                assertEquals(PduType.R2T, r2t.type());
                // the other host preempts the holder and aborts (RACQA 2), taking Exclusive Access (RTYPE 2)
                assertEquals(Status.SUCCESS, send(other, NvmOpcode.RESERVATION_ACQUIRE.code, 2 | 2 << 8, keys(0xbbbb, 0xaaaa)));
                byte[] ones = new byte[4096];
                java.util.Arrays.fill(ones, (byte) 1);
                io.answer(r2t, ones);
                assertEquals(Status.PREEMPT_ABORTED, io.receive().cqe().status());
                ByteBuffer block = ByteBuffer.allocate(4096);
                ram.read(0, block);
                assertEquals(0, block.get(0), "the aborted write did not land");

                CompletionQueueEntry aen = admin.receive().cqe();
                assertEquals(6 | 0x80 << 16, aen.dw0(), "I/O command specific event: reservation log page available");
                ByteBuffer log = reservationLog(admin);
                assertEquals(1, log.getLong(0), "log page count");
                assertEquals(Reservation.REGISTRATION_PREEMPTED, log.get(8));
                assertEquals(0, log.get(9), "no more waiting");
                assertEquals(1, log.getInt(12), "NSID");
                assertEquals(0, reservationLog(admin).get(8), "read: the log is empty");
                // a new command from the fenced host meets the reservation
                assertEquals(Status.RESERVATION_CONFLICT, io.command(q -> q.blocks(NvmOpcode.READ, 0, 1).psdt(1).nsid(1)
                        .sgl(0, 4096, Sgl.TCP_TRANSPORT), null).cqe().status());
            }
        }
    }

    /**
     * Set Features Reservation Notification Mask: a masked kind of notice is never logged; the
     * next unmasked one is the first entry, with the log page count 1. Get Features reads the mask.
     */
    @Test
    void aMaskedNoticeIsNotLogged() throws Exception {
        try (Target target = new Target(); TwoHosts h = new TwoHosts(serve(target, new RamBackend(1 << 20, 4096)))) {
            RawHost admin = h.admin;
            // mask Registration Preempted (bit 1) on namespace 1
            assertEquals(Status.SUCCESS, admin.command(q -> q.opcode(AdminOpcode.SET_FEATURES.code).psdt(1).nsid(1)
                    .cdw(10, FeatureId.RESERVATION_NOTIFICATION_MASK).cdw(11, 1 << 1), null).cqe().status());
            CompletionQueueEntry mask = admin.command(q -> q.opcode(AdminOpcode.GET_FEATURES.code).psdt(1).nsid(1)
                    .cdw(10, FeatureId.RESERVATION_NOTIFICATION_MASK), null).cqe();
            assertEquals(1 << 1, mask.dw0());
            assertEquals(Status.INVALID_FIELD, admin.command(q -> q.opcode(AdminOpcode.SET_FEATURES.code).psdt(1).nsid(1)
                    .cdw(10, FeatureId.RESERVATION_PERSISTENCE).cdw(11, 1), null).cqe().status(), "no PTPL without a store");
            admin.send(admin.capsule(q -> q.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1), null));
            assertEquals(Status.SUCCESS, send(h.io, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xaaaa)));
            assertEquals(Status.SUCCESS, send(h.other, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xbbbb)));
            // the other host preempts this one (masked here), then this host registers again and the
            // other releases a Write Exclusive Registrants Only reservation: Reservation Released
            assertEquals(Status.SUCCESS, send(h.other, NvmOpcode.RESERVATION_ACQUIRE.code, 1 | 1 << 8, keys(0xbbbb, 0xaaaa)));
            assertEquals(Status.SUCCESS, send(h.io, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xaaaa)));
            assertEquals(Status.SUCCESS, send(h.other, NvmOpcode.RESERVATION_RELEASE.code, 1 << 8, keys(0xbbbb, 0)));
            assertEquals(Status.SUCCESS, send(h.other, NvmOpcode.RESERVATION_ACQUIRE.code, 3 << 8, keys(0xbbbb, 0)));
            assertEquals(Status.SUCCESS, send(h.other, NvmOpcode.RESERVATION_RELEASE.code, 3 << 8, keys(0xbbbb, 0)));
            assertEquals(6 | 0x80 << 16, admin.receive().cqe().dw0());
            ByteBuffer log = reservationLog(admin);
            assertEquals(Reservation.RESERVATION_RELEASED, log.get(8), "the masked preemption was not logged");
            assertEquals(1, log.getLong(0), "the first notice logged");
        }
    }

    /** A backend whose writes wait until released, as a slow disk's would, and say when they are done. */
    static final class SlowWrites implements io.nvmeof.target.backend.Backend {
        final RamBackend ram = new RamBackend(1 << 20, 4096);
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        volatile boolean writeDone;

        @Override public long size() { return ram.size(); }
        @Override public int blockSize() { return ram.blockSize(); }
        @Override public boolean blocking() { return true; }
        @Override public void read(long offset, ByteBuffer dst) { ram.read(offset, dst); }
        @Override public void write(long offset, ByteBuffer src) throws IOException {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            ram.write(offset, src);
            writeDone = true;
        }
        @Override public void flush() { }
        @Override public String describe() { return "slow writes"; }
        @Override public void close() { }
    }

    /**
     * A write already inside a blocking backend cannot be stopped: the preempt-and-abort that
     * fences its host completes only once that write has finished, so that nothing of the
     * preempted host's lands after the preemptor hears it succeeded (nvmet waits the same way).
     */
    @Test
    void preemptAndAbortCompletesOnlyAfterThePreemptedHostsWriteInTheBackendFinished() throws Exception {
        SlowWrites backend = new SlowWrites();
        try (Target target = new Target()) {
            try (TwoHosts h = new TwoHosts(serve(target, backend))) {
                RawHost io = h.io;
                RawHost other = h.other;
                assertEquals(Status.SUCCESS, send(io, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xaaaa)));
                assertEquals(Status.SUCCESS, send(other, NvmOpcode.RESERVATION_REGISTER.code, 0, keys(0, 0xbbbb)));
                io.send(io.capsule(q -> q.blocks(NvmOpcode.WRITE, 0, 1).psdt(1).nsid(1).sgl(0, 4096, Sgl.IN_CAPSULE),
                        new byte[4096]));
                assertTrue(backend.entered.await(10, java.util.concurrent.TimeUnit.SECONDS), "the write is in the backend");
                // the write is let go only once the preemption has been applied (and then 100 ms more,
                // time for a completion that did not wait to arrive first)
                Reservations res = target.subsystem(NQN).namespace(1).reservations();
                Thread releaser = new Thread(() -> {
                    try {
                        Awaitility.await("this host preempted").atMost(Duration.ofSeconds(60))
                                .pollInterval(Duration.ofMillis(1))
                                .until(() -> res.state().registrant(RawHost.HOST_ID) == null);
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                    backend.release.countDown();
                });
                releaser.start();
                Status preempt = send(other, NvmOpcode.RESERVATION_ACQUIRE.code, 2 | 2 << 8, keys(0xbbbb, 0xaaaa));
                assertEquals(Status.SUCCESS, preempt);
                assertTrue(backend.writeDone, "the preempt-and-abort completed while the preempted host's write still ran");
                assertEquals(Status.SUCCESS, io.receive().cqe().status(), "a write already in the backend completes as it ran");
                releaser.join();
            }
        }
    }

    /** Serves {@code backend} as namespace 1 of {@link #NQN} on a loopback port of {@code target}. */
    static InetSocketAddress serve(Target target, io.nvmeof.target.backend.Backend backend) throws IOException {
        Subsystem s = new Subsystem(NQN, "R1", "resv", "1.0");
        s.addNamespace(new Namespace(NQN, 1, backend, false, null));
        target.addSubsystem(s);
        return target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
    }

    /** This host (RawHost's identity) and another, each with its admin queue and one I/O queue. */
    static final class TwoHosts implements AutoCloseable {
        static final java.util.UUID OTHER_ID = java.util.UUID.fromString("0b0b0b0b-0000-4000-8000-00000000000b");
        final RawHost admin;
        final RawHost io;
        final RawHost otherAdmin;
        final RawHost other;

        TwoHosts(InetSocketAddress address) throws IOException {
            admin = new RawHost(address);
            io = new RawHost(address);
            otherAdmin = new RawHost(address).as("nqn.2026-11.io.nvmeof:other", OTHER_ID);
            other = new RawHost(address).as("nqn.2026-11.io.nvmeof:other", OTHER_ID);
            io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
            other.bringUpIo(NQN, 1, otherAdmin.bringUpAdmin(NQN));
        }

        @Override
        public void close() throws IOException {
            for (RawHost r : new RawHost[] {other, otherAdmin, io, admin}) {
                r.close();
            }
        }
    }
}
