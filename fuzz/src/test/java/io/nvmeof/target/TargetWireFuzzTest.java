package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.nvmeof.fuzz.FuzzRuns;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.target.backend.NullBackend;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The target's NVMe/TCP queue, decoder and command path with what a fuzzer makes of them. Each
 * input is one connection (or two: an admin queue, then the I/O queue fuzzed on), and either
 * <ul>
 *   <li>a raw byte stream in arbitrary splits (optionally after a valid ICReq, digests on or
 *       off): nothing may escape the pipeline, and what the target sends must be whole PDUs; or
 *   <li>after ICReq and Connect (admin or I/O queue, digests on or off), a run of arbitrary
 *       64-byte SQEs with in-capsule data, framed as valid capsules, each R2T answered with the
 *       data it asks for: every command gets exactly one response (or the connection ends with a
 *       C2HTermReq). The only commands that may stay open are Asynchronous Event Requests and
 *       the first half of a fused pair whose second has not come yet.
 * </ul>
 * Then a clean host must still connect and be served.
 */
class TargetWireFuzzTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:fuzz";
    private static final FuzzRuns RUNS = new FuzzRuns("target wire and command path",
            TargetWireFuzzTest.class, "everyCommandIsAnsweredAndNothingEscapes");
    static Target target;
    static Port port;

    @BeforeAll
    static void start() {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 1);
        // offloaded backend calls run on the fuzzing thread, their finish on the embedded loop:
        // deterministic, and nothing touches the embedded channel from another thread
        o = o.withIoExecutor(new AbstractExecutorService() {
            @Override
            public void execute(Runnable command) {
                command.run();
            }

            @Override
            public void shutdown() {
            }

            @Override
            public List<Runnable> shutdownNow() {
                return List.of();
            }

            @Override
            public boolean isShutdown() {
                return false;
            }

            @Override
            public boolean isTerminated() {
                return false;
            }

            @Override
            public boolean awaitTermination(long timeout, TimeUnit unit) {
                return true;
            }
        });
        target = new Target(o);
        Subsystem s = new Subsystem(NQN, "FUZZ1", "fuzz", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 512), false, null));
        s.addNamespace(new Namespace(NQN, 2, new NullBackend(1L << 30, 4096), false, null));
        s.addNamespace(new Namespace(NQN, 3, new RamBackend(64 << 10, 4096), true, null));
        target.addSubsystem(s);
        port = new Port(1, "tcp", new InetSocketAddress("127.0.0.1", 4420), true, List.of());
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            cleanHostIsServed();
            RUNS.report();
        } finally {
            target.close();
        }
    }

    /** Reads an input front to back; zeros once it runs out. */
    static final class Input {
        final byte[] b;
        int at;

        Input(byte[] b) {
            this.b = b;
        }

        boolean more() {
            return at < b.length;
        }

        int u8() {
            return at < b.length ? b[at++] & 0xff : 0;
        }

        byte[] bytes(int n) {
            byte[] out = new byte[Math.max(0, Math.min(n, b.length - at))];
            System.arraycopy(b, at, out, 0, out.length);
            at += out.length;
            return out;
        }
    }

    @FuzzTest(maxDuration = "30m")
    void everyCommandIsAnsweredAndNothingEscapes(byte[] data) {
        RUNS.count();
        long t0 = System.nanoTime();
        Input in = new Input(data);
        int mode = in.u8();
        boolean hd = (mode & 1) != 0;
        boolean dd = (mode & 2) != 0;
        if ((mode & 8) != 0) {
            raw(in, (mode & 16) != 0, hd, dd);
        } else {
            commands(in, (mode & 4) != 0, hd, dd);
        }
        if (RUNS.executions() % 512 == 0) {
            cleanHostIsServed();
        }
        RUNS.spent(System.nanoTime() - t0);
    }

    private static void raw(Input in, boolean icreqFirst, boolean hd, boolean dd) {
        try (EmbeddedHost h = new EmbeddedHost(target, port)) {
            if (icreqFirst) {
                h.icreq(hd, dd);
            }
            while (in.more() && h.ch.isOpen()) {
                byte[] chunk = in.bytes(1 + in.u8());
                h.sendRaw(Unpooled.wrappedBuffer(chunk));
                h.ch.checkException();
                drainWholePdus(h);
            }
            h.ch.checkException();
        }
    }

    private static void drainWholePdus(EmbeddedHost h) {
        ByteBuf p;
        while ((p = h.next()) != null) {
            try {
                PduType t = PduType.of(p.getByte(0));
                assertTrue(t == PduType.IC_RESP || t == PduType.CAPSULE_RESP || t == PduType.C2H_DATA || t == PduType.R2T
                        || t == PduType.C2H_TERM_REQ, "the target sent a " + t + " PDU");
            } finally {
                p.release();
            }
        }
    }

    private static void commands(Input in, boolean ioQueue, boolean hd, boolean dd) {
        EmbeddedHost admin = new EmbeddedHost(target, port);
        EmbeddedHost io = null;
        try {
            admin.icreq(hd, dd);
            int cntlid = admin.connect(NQN, 0, 0xffff);
            admin.enable();
            EmbeddedHost h = admin;
            if (ioQueue) {
                io = new EmbeddedHost(target, port);
                io.icreq(hd, dd);
                io.connect(NQN, 1, cntlid);
                h = io;
            }
            run(h, in, ioQueue);
        } finally {
            if (io != null) {
                io.close();
            }
            admin.close();
        }
    }

    private static void run(EmbeddedHost h, Input in, boolean ioQueue) {
        Map<Integer, String> open = new HashMap<>();   // by CID: what the command was
        TRACE.setLength(0);
        Set<Integer> aers = new HashSet<>();
        int cid = 1;
        while (in.more() && h.ch.isOpen()) {
            int sel = in.u8();
            ByteBuffer sqe = ByteBuffer.wrap(in.bytes(SubmissionQueueEntry.SIZE));
            if (sqe.remaining() < SubmissionQueueEntry.SIZE) {
                break;
            }
            byte[] inCapsule = sel == 0 ? null : in.bytes((sel & 0x7f) * 64 + (sel >= 0x80 ? 1 : 0));
            SubmissionQueueEntry view = new SubmissionQueueEntry().wrap(sqe, 0);
            int id = cid++;
            view.cid(id);
            open.put(id, view.toString());
            if (!ioQueue && view.opcode() == AdminOpcode.ASYNC_EVENT_REQUEST.code) {
                aers.add(id); // answered at an event, or at once when over the limit
            }
            TRACE.append("sent ").append(view).append('\n');
            h.sendRaw(h.capsule(sqe, inCapsule));
            if (!exchange(h, open)) {
                return; // the target ended the connection with a termination request
            }
            for (Map.Entry<Integer, String> e : open.entrySet()) {
                int c = e.getKey();
                // the first half of a fused pair waits for the very next command, nothing else
                if (!aers.contains(c) && !(c == id && view.fuse() == SubmissionQueueEntry.FUSE_FIRST)) {
                    throw new AssertionError("command " + e.getValue() + " was not answered"
                            + (ioQueue ? " on an I/O queue" : " on the admin queue"));
                }
            }
        }
        h.ch.checkException();
    }

    static final StringBuilder TRACE = new StringBuilder();

    /** Handles what the target sends back; false once it has ended the connection. */
    private static boolean exchange(EmbeddedHost h, Map<Integer, String> open) {
        ByteBuf p;
        while ((p = h.next()) != null) {
            try {
                h.checkHeaderDigest(p);
                PduType t = PduType.of(p.getByte(0));
                int flags = p.getUnsignedByte(1);
                TRACE.append(t).append(' ').append(ByteBufUtil.hexDump(p, 0, Math.min(24, p.readableBytes()))).append('\n');
                if (t == PduType.CAPSULE_RESP) {
                    int cid = p.getUnsignedShortLE(8 + 12);
                    assertTrue(open.remove(cid) != null, "a response for CID " + cid + ", which is not open: "
                            + TRACE);
                } else if (t == PduType.C2H_DATA) {
                    int cid = p.getUnsignedShortLE(8);
                    assertTrue(open.containsKey(cid), "C2HData for CID " + cid + ", which is not open");
                    if ((flags & Pdu.FLAG_SUCCESS) != 0) {
                        open.remove(cid);
                    }
                } else if (t == PduType.R2T) {
                    ByteBuffer head = ByteBuffer.allocate(R2TPdu.SIZE);
                    p.getBytes(0, head);
                    R2TPdu r2t = new R2TPdu().wrap(head.flip(), 0);
                    assertTrue(open.containsKey(r2t.cccid()), "R2T for CID " + r2t.cccid() + ", which is not open");
                    assertTrue(r2t.r2tl() > 0, "R2TL 0");
                    // as a host does: H2CData PDUs of at most MAXH2CDATA for what the R2T asks
                    long end = r2t.r2to() + r2t.r2tl();
                    for (long at = r2t.r2to(); at < end; at += target.tuning().maxH2cData()) {
                        int n = (int) Math.min(target.tuning().maxH2cData(), end - at);
                        h.sendRaw(h.h2cData(r2t.cccid(), r2t.ttag(), at, n, at + n == end, (byte) 0x5a));
                    }
                } else if (t == PduType.C2H_TERM_REQ) {
                    h.ch.runPendingTasks();
                    assertTrue(!h.ch.isActive(), "the target sent a C2HTermReq and kept the connection");
                    return false;
                } else {
                    throw new AssertionError("the target sent a " + t + " PDU on a live queue");
                }
            } finally {
                p.release();
            }
        }
        h.ch.checkException();
        return h.ch.isActive();
    }

    /** A host that follows the rules connects, enables the controller and is served. */
    static void cleanHostIsServed() {
        try (EmbeddedHost h = new EmbeddedHost(target, port)) {
            h.icreq(true, true);
            h.connect(NQN, 0, 0xffff);
            h.enable();
            assertEquals(0, h.command(EmbeddedHost.sqe(s -> s.opcode(AdminOpcode.KEEP_ALIVE.code).psdt(1).cid(7)), null),
                    "Keep Alive from a clean host");
        }
    }
}
