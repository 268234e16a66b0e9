package io.nvmeof.fabric.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle every provider inherits, against a scripted queue pair whose completions the
 * test hands in one by one: which completions reach the handler, with what; when the queue
 * pair is destroyed; that {@code onDisconnected} comes once, after the queue pair is quiet.
 */
class AbstractRdmaConnectionTest {
    private final EventLoop loop = new DefaultEventLoop();
    private final ProtectionDomain pd = new ProtectionDomain() {
        @Override
        public MemoryRegion register(ByteBuffer b, int access) {
            return new MemoryRegion(this, b, 0x10000, 1, 2, access, null);
        }

        @Override
        public void deregister(MemoryRegion mr) {
            mr.markDeregistered();
        }
    };
    private final MemoryRegion mr = new MemoryRegion(pd, ByteBuffer.allocateDirect(4096), 0x10000, 1, 2,
            MemoryRegion.LOCAL_WRITE, null);

    /** A queue pair that records what was posted and completes only what the test says. */
    private final class Scripted extends AbstractRdmaConnection {
        final List<Long> posted = new ArrayList<>();
        final ArrayDeque<long[]> cq = new ArrayDeque<>();    // {id, status, byteLength}
        int disconnects;
        int destroys;
        /** What touched the queue pair after it was destroyed (a native provider would crash there). */
        final List<String> afterDestroy = new ArrayList<>();
        boolean flushOnDisconnect = true;

        Scripted(RdmaHandler h, CompletableFuture<RdmaConnection> connecting) {
            super(loop, h, connecting);
            size(4, 4);
            made.add(this);
        }

        /** Puts a completion in the CQ and says so, as a completion channel thread would. */
        void completeLater(long id, int status, int len) {
            synchronized (cq) {
                cq.add(new long[] {id, status, len});
            }
            completionsReady();
        }

        @Override
        protected void arm() {
            if (destroys > 0) {
                afterDestroy.add("arm");
            }
        }

        @Override
        protected int poll(int max) {
            if (destroys > 0) {
                afterDestroy.add("poll");
            }
            int n = 0;
            while (n < max) {
                long[] c;
                synchronized (cq) {
                    c = cq.poll();
                }
                if (c == null) {
                    break;
                }
                n++;
                complete(c[0], (int) c[1], (int) c[2], -1);
            }
            return n;
        }

        @Override
        protected void doPostRecv(long id, MemoryRegion m, int offset, int length) {
            if (destroys > 0) {
                afterDestroy.add("post");
            }
            posted.add(id);
        }

        @Override
        protected void doPostSend(long id, MemoryRegion m, int offset, int length, long inv) {
            posted.add(id);
        }

        @Override
        protected void doPostRead(long id, MemoryRegion m, int offset, int length, long ra, int rkey) throws IOException {
            if (length == 13) {
                throw new IOException("ibv_post_send: refused");
            }
            posted.add(id);
        }

        @Override
        protected void doPostWriteAndSend(long id, MemoryRegion m, int offset, int length, long ra, int rkey,
                                          MemoryRegion msg, int mo, int ml, long inv) {
            posted.add(id | WRITE_PART);
            posted.add(id);
        }

        @Override
        protected void disconnect() {
            disconnects++;
            if (flushOnDisconnect) {
                for (long id : posted) {
                    completeLater(id, WorkCompletion.WR_FLUSH_ERR, 0);
                }
            }
        }

        @Override
        protected void destroy(Runnable done) {
            destroys++;
            done.run();
        }

        @Override
        public ProtectionDomain pd() {
            return pd;
        }
    }

    private final List<Scripted> made = new ArrayList<>();

    @AfterEach
    void nothingTouchedTheQueuePairAfterItWasDestroyed() throws Exception {
        try {
            run(() -> { });
            for (Scripted c : made) {
                assertTrue(c.afterDestroy.isEmpty(), "after destroy: " + c.afterDestroy);
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private <T> T on(Callable<T> c) throws Exception {
        return loop.submit(c).get(10, TimeUnit.SECONDS);
    }

    private void run(Runnable r) throws Exception {
        loop.submit(r).get(10, TimeUnit.SECONDS);
    }

    private Scripted accepted(RdmaHandler h) throws Exception {
        Scripted c = new Scripted(h, null);
        run(c::established);
        return c;
    }

    @Test
    void completionsCarryTheCallersIdsOpcodesAndLengths() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        run(() -> {
            c.postRecv(1001, mr, 0, 512);
            c.postSend(1002, mr, 0, 64, RdmaConnection.NO_INVALIDATE);
            c.postRead(1003, mr, 0, 4000, 0x5000, 9);
        });
        assertEquals(3, c.posted.size());
        c.completeLater(c.posted.get(2), WorkCompletion.SUCCESS, 77);      // (a READ's byte_len is not relied on)
        c.completeLater(c.posted.get(0), WorkCompletion.SUCCESS, 100);
        c.completeLater(c.posted.get(1), WorkCompletion.SUCCESS, 0);
        assertEquals(new RecordingHandler.Completion(1003, WorkCompletion.RDMA_READ, 0, 4000, -1), h.next());
        assertEquals(new RecordingHandler.Completion(1001, WorkCompletion.RECV, 0, 100, -1), h.next());
        assertEquals(new RecordingHandler.Completion(1002, WorkCompletion.SEND, 0, 0, -1), h.next());
        c.completeLater(c.posted.get(0), WorkCompletion.SUCCESS, 100);      // again: nothing is posted there
        c.completeLater(AbstractRdmaConnection.RECV | 3, WorkCompletion.SUCCESS, 100);
        run(() -> { });
        assertNull(h.completions.poll(200, TimeUnit.MILLISECONDS), "a stale or unknown completion is dropped");
        assertTrue(c.isOpen());
    }

    @Test
    void endsOnceAfterTheQueuePairFlushed() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        c.flushOnDisconnect = false;
        run(() -> {
            c.postRecv(1, mr, 0, 512);
            c.postRecv(2, mr, 512, 512);
            c.postSend(3, mr, 0, 64, RdmaConnection.NO_INVALIDATE);
        });
        run(c::close);
        assertEquals(ConnectionState.DRAINING, c.state());
        assertEquals(1, c.disconnects);
        assertFalse(c.isOpen());
        run(() -> c.postSend(4, mr, 0, 64, RdmaConnection.NO_INVALIDATE));
        assertEquals(3, c.posted.size(), "a post while draining is dropped");
        c.completeLater(c.posted.get(2), WorkCompletion.SUCCESS, 0);
        c.completeLater(c.posted.get(0), WorkCompletion.WR_FLUSH_ERR, 0);
        run(() -> { });
        assertEquals(0, c.destroys, "one receive is still posted: the device may still write it");
        assertFalse(h.disconnected.isDone());
        c.completeLater(c.posted.get(1), WorkCompletion.WR_FLUSH_ERR, 0);
        assertNull(h.disconnected.get(10, TimeUnit.SECONDS), "an orderly end");
        assertEquals(1, c.destroys);
        assertEquals(ConnectionState.CLOSED, c.state());
        assertTrue(h.completions.isEmpty(), "nothing is delivered once the end began: " + h.completions);
        run(c::close);
        assertEquals(1, c.disconnects);
        assertThrows(ExecutionException.class, () -> run(() -> c.postRecv(5, mr, 0, 64)));
        h.assertLifecycle(c);
    }

    @Test
    void aFailedCompletionIsDeliveredWithItsOpcodeAndEndsTheConnection() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        run(() -> {
            c.postRecv(1, mr, 0, 512);
            c.postWriteAndSend(7, mr, 0, 512, 0x9000, 5, mr, 512, 16, RdmaConnection.NO_INVALIDATE);
        });
        long send = c.posted.get(2);
        // the chain's WRITE fails; its SEND is flushed behind it
        c.completeLater(send | AbstractRdmaConnection.WRITE_PART, WorkCompletion.REM_ACCESS_ERR, 0);
        c.completeLater(send, WorkCompletion.WR_FLUSH_ERR, 0);
        RecordingHandler.Completion f = h.next();
        assertEquals(7, f.wrId());
        assertEquals(WorkCompletion.SEND, f.opcode());
        assertEquals(WorkCompletion.REM_ACCESS_ERR, f.status());
        Throwable cause = h.disconnected.get(10, TimeUnit.SECONDS);
        assertTrue(cause.getMessage().contains("RDMA WRITE failed: remote access error"), cause.getMessage());
        assertEquals(1, c.destroys);
        assertTrue(h.completions.isEmpty(), "the flushed receive is not delivered");
        h.assertLifecycle(c);
    }

    @Test
    void aHandlerThatClosesOnAFailureKeepsTheCause() throws Exception {
        RecordingHandler rec = new RecordingHandler();
        Scripted[] self = new Scripted[1];
        RdmaHandler h = new RdmaHandler() {
            @Override
            public void onCompletion(long wrId, int opcode, int status, int byteLength, long inv) {
                rec.onCompletion(wrId, opcode, status, byteLength, inv);
                self[0].close();
            }

            @Override
            public void onDisconnected(Throwable cause) {
                rec.onDisconnected(cause);
            }
        };
        Scripted c = self[0] = accepted(h);
        run(() -> c.postRead(3, mr, 0, 64, 0x9000, 5));
        c.completeLater(c.posted.get(0), WorkCompletion.RETRY_EXC_ERR, 0);
        Throwable cause = rec.disconnected.get(10, TimeUnit.SECONDS);
        assertTrue(cause.getMessage().contains("RDMA READ failed: transport retry counter exceeded"), cause.getMessage());
        rec.assertLifecycle(c);
    }

    @Test
    void aQueuePairThatNeverFlushesIsDestroyedAfterTheWait() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        c.flushOnDisconnect = false;
        run(() -> c.postRecv(1, mr, 0, 512));
        long start = System.nanoTime();
        run(c::close);
        assertNull(h.disconnected.get(AbstractRdmaConnection.QUIET_WAIT_MS + 5000, TimeUnit.MILLISECONDS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms >= AbstractRdmaConnection.QUIET_WAIT_MS - 100, "destroyed after " + ms + " ms");
        assertEquals(1, c.destroys);
        c.completeLater(c.posted.get(0), WorkCompletion.WR_FLUSH_ERR, 0);   // too late: nobody polls any more
        run(() -> { });
        h.assertLifecycle(c);
    }

    @Test
    void aFailedPostEndsTheConnectionAndFreesItsSlot() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        run(() -> c.postRead(1, mr, 0, 13, 0x9000, 5));                  // the scripted QP refuses 13 bytes
        Throwable cause = h.disconnected.get(10, TimeUnit.SECONDS);
        assertTrue(cause.getMessage().contains("refused"), cause.getMessage());
        assertEquals(1, c.destroys, "nothing was outstanding: destroyed at once");
    }

    @Test
    void aFullQueueAndABadRegionThrowWithoutHarm() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        run(() -> {
            for (int i = 0; i < 4; i++) {
                c.postSend(i, mr, 0, 64, RdmaConnection.NO_INVALIDATE);
            }
        });
        assertThrows(ExecutionException.class, () -> run(() -> c.postSend(9, mr, 0, 64, RdmaConnection.NO_INVALIDATE)));
        MemoryRegion readOnly = new MemoryRegion(pd, ByteBuffer.allocateDirect(64), 0x20000, 3, 4, 0, null);
        assertThrows(ExecutionException.class, () -> run(() -> c.postRead(9, readOnly, 0, 64, 0x9000, 5)));
        assertThrows(ExecutionException.class, () -> run(() -> c.postRecv(9, mr, 4000, 512)));
        assertTrue(c.isOpen(), "a refused post leaves the connection alone");
        c.completeLater(c.posted.get(0), WorkCompletion.SUCCESS, 0);
        assertEquals(0, h.next().wrId());
        run(() -> c.postSend(10, mr, 0, 64, RdmaConnection.NO_INVALIDATE));  // the slot came back
        assertEquals(5, c.posted.size());
    }

    @Test
    void theConnectingSideIsHandedOutWhenEstablishedOrFailsItsFuture() throws Exception {
        CompletableFuture<RdmaConnection> f = new CompletableFuture<>();
        RecordingHandler h = new RecordingHandler();
        Scripted c = new Scripted(h, f);
        assertFalse(c.isOpen(), "not before it is established");
        run(c::established);
        assertSame(c, f.get(1, TimeUnit.SECONDS));
        assertTrue(c.isOpen());

        CompletableFuture<RdmaConnection> g = new CompletableFuture<>();
        Scripted d = new Scripted(new RecordingHandler(), g);
        IOException why = new IOException("rejected");
        run(() -> d.failConnect(why));
        assertSame(why, assertThrows(ExecutionException.class, () -> g.get(1, TimeUnit.SECONDS)).getCause());
        assertEquals(1, d.destroys);
        assertEquals(ConnectionState.CLOSED, d.state());

        CompletableFuture<RdmaConnection> gaveUp = new CompletableFuture<>();
        Scripted e = new Scripted(new RecordingHandler(), gaveUp);
        gaveUp.cancel(false);
        run(e::established);
        assertEquals(1, e.disconnects, "a connection nobody waits for any more is ended");
    }

    @Test
    void postsFromAnotherThreadHopOntoTheLoop() throws Exception {
        RecordingHandler h = new RecordingHandler();
        Scripted c = accepted(h);
        c.postRecv(1, mr, 0, 512);
        assertEquals(1, (int) on(() -> c.posted.size()));
    }
}
