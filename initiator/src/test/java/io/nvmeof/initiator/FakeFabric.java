package io.nvmeof.initiator;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.FabricsCommandType;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An NVMe-oF fabric in memory, for unit tests of the host: {@code nvme+fake://NAME:PORT/<NQN>}
 * reaches a {@link Port} that answers every command on the controller's own event loop with
 * no socket: bring-up (Connect, properties, Identify, queues), keep-alive, asynchronous events,
 * the ANA log, and reads and writes of one namespace of 4 KiB blocks whose bytes every port of
 * the same {@link Volume} shares. A port can go down (its queues end, new ones are refused),
 * be partitioned (commands go unanswered, nothing ends), change its ANA state (with the
 * notice), and fail the next commands of an opcode with a status.
 */
final class FakeFabric {
    static final String TRTYPE = "fake";
    private static final Map<String, Port> PORTS = new ConcurrentHashMap<>();

    static {
        HostTransports.register(new HostTransport.Type() {
            @Override
            public String name() {
                return TRTYPE;
            }

            @Override
            public Map<String, String> options(Map<String, String> given) {
                if (!given.isEmpty()) {
                    throw new IllegalArgumentException("the fake transport takes no parameters: " + given.keySet());
                }
                return given;
            }

            @Override
            public HostTransport create(NvmeofUri uri, EventLoopGroup group, ConnectOptions options) {
                return new HostTransport() {
                    @Override
                    public CompletableFuture<HostQueue> openQueue(InetSocketAddress address, int qid, int depth,
                            int inCapsule, int controllerId) {
                        Port p = PORTS.get(uri.host() + ":" + uri.port());
                        if (p == null || p.down) {
                            return CompletableFuture.failedFuture(new ConnectException("connection refused: " + uri));
                        }
                        Queue q = new Queue(p, group.next(), qid, depth, inCapsule, options.commandTimeout.toNanos());
                        p.queues.add(q);
                        return CompletableFuture.completedFuture(q);
                    }

                    @Override
                    public void close() {
                    }
                };
            }
        });
    }

    private FakeFabric() {
    }

    /** One namespace's bytes and identity, shared by the ports that serve it. */
    static final class Volume {
        final String nqn;
        final byte[] nguid;
        final ByteBuffer data;

        Volume(String nqn, int blocks, int id) {
            this.nqn = nqn;
            this.nguid = new byte[16];
            nguid[15] = (byte) id;
            nguid[0] = 0x5a;
            this.data = ByteBuffer.allocate(blocks * 4096);
        }

        long blocks() {
            return data.capacity() / 4096;
        }
    }

    /** One address of the fabric: a controller of {@code volume}'s subsystem behind it. */
    static final class Port {
        final String name;
        final Volume volume;
        final int cntlidBase;
        final AtomicInteger cntlids = new AtomicInteger();
        final List<Queue> queues = new CopyOnWriteArrayList<>();
        final Map<Integer, ArrayDeque<Status>> failNext = new ConcurrentHashMap<>();
        volatile boolean down;
        volatile boolean partitioned;
        volatile int ana = AnaLog.OPTIMIZED;
        volatile long anaChanges = 1;
        final AtomicInteger ios = new AtomicInteger();
        /** Get Log Page requests for the ANA log, and those held unanswered while {@link #holdAnaLog}. */
        final AtomicInteger anaLogReads = new AtomicInteger();
        volatile boolean holdAnaLog;
        private final List<Runnable> heldAnaLogs = new CopyOnWriteArrayList<>();
        /** While on, I/O commands wait unanswered until {@link #releaseIo}. */
        volatile boolean holdIo;
        /** The next Identify Namespace ends its admin connection instead of an answer (a gateway killed then). */
        volatile boolean dropOnIdentifyNamespace;
        private final List<Runnable> heldIo = new CopyOnWriteArrayList<>();

        Port(String name, Volume volume, int cntlidBase) {
            this.name = name;
            this.volume = volume;
            this.cntlidBase = cntlidBase;
        }

        String uri() {
            return "nvme+" + TRTYPE + "://" + name + "/" + volume.nqn;
        }

        /** The next {@code count} commands of {@code opcode} (I/O queues) fail with {@code s}. */
        void failNext(int opcode, int count, Status s) {
            ArrayDeque<Status> q = failNext.computeIfAbsent(opcode, k -> new ArrayDeque<>());
            synchronized (q) {
                for (int i = 0; i < count; i++) {
                    q.add(s);
                }
            }
        }

        /** The port dies: every queue ends; new connections are refused until {@link #up}. */
        void down() {
            down = true;
            for (Queue q : queues) {
                q.eventLoop().execute(() -> q.end(new IOException("port " + name + " went down")));
            }
        }

        void up() {
            down = false;
        }

        /** Answers every ANA log read held so far, and those to come. */
        void releaseAnaLog() {
            holdAnaLog = false;
            release(heldAnaLogs);
        }

        /** Answers every I/O command held so far, at once, and those to come. */
        void releaseIo() {
            holdIo = false;
            release(heldIo);
        }

        private static void release(List<Runnable> held) {
            for (Runnable r : held) {
                held.remove(r);
                r.run();
            }
        }

        /** Commands go unanswered (and keep-alives with them) while on; nothing is closed. */
        void partition(boolean on) {
            partitioned = on;
        }

        /** A new ANA state, announced to every admin queue with an outstanding event request. */
        void ana(int state) {
            ana = state;
            anaChanges++;
            for (Queue q : queues) {
                if (q.qid() == 0) {
                    q.eventLoop().execute(() -> q.notice(2 | 0x03 << 8 | LogPage.ANA << 16));
                }
            }
        }
    }

    /** Adds a port named {@code name} ("a:4420") in front of {@code volume}; returns it. */
    static Port port(String name, Volume volume, int cntlidBase) {
        Port p = new Port(name, volume, cntlidBase);
        PORTS.put(name, p);
        return p;
    }

    static void remove(Port p) {
        PORTS.remove(p.name);
        p.down();
    }

    /** A queue whose "wire" is this class: each command is answered on the loop it was sent on. */
    static final class Queue extends HostQueue {
        private final Port port;
        private final EventLoop loop;
        private volatile boolean open = true;
        private boolean ready;
        private boolean shutDown;
        private final ArrayDeque<Command> events = new ArrayDeque<>();
        private final ArrayDeque<Integer> pendingNotices = new ArrayDeque<>();

        Queue(Port port, EventLoop loop, int qid, int depth, int inCapsule, long timeoutNanos) {
            super(qid, depth, inCapsule, timeoutNanos, 1000);
            this.port = port;
            this.loop = loop;
            startTimeoutChecks(loop);
            super.ready.complete(this);
        }

        @Override
        public EventLoop eventLoop() {
            return loop;
        }

        @Override
        public boolean isOpen() {
            return open && failure == null;
        }

        @Override
        public CompletableFuture<Void> close() {
            loop.execute(() -> end(new IOException("closed")));
            return ended;
        }

        @Override
        protected void resetConnection() {
            loop.execute(() -> end(new IOException("reset")));
        }

        void end(Throwable cause) {
            if (!open) {
                return;
            }
            open = false;
            port.queues.remove(this);
            events.clear();
            connectionEnded(cause);
        }

        /** An asynchronous event: to an outstanding request, or kept for the next one. */
        void notice(int dw0) {
            Command aer = events.poll();
            if (aer != null) {
                responded(aer, Status.SUCCESS, dw0);
            } else {
                pendingNotices.add(dw0);
            }
        }

        @Override
        protected void transmit(Command c) {
            if (!open || port.partitioned) {
                return; // unanswered
            }
            if (qid > 0 && port.holdIo) {
                port.heldIo.add(() -> loop.execute(() -> answer(c)));
                return;
            }
            answer(c);
        }

        private void answer(Command c) {
            if (!open) {
                return;
            }
            SubmissionQueueEntry s = c.sqe;
            int op = s.opcode();
            if (qid > 0) {
                ArrayDeque<Status> fails = port.failNext.get(op);
                Status f = null;
                if (fails != null) {
                    synchronized (fails) {
                        f = fails.poll();
                    }
                }
                if (f != null) {
                    responded(c, f, 0);
                    return;
                }
            }
            if (op == AdminOpcode.FABRICS.code) {
                fabrics(c, s);
            } else if (qid == 0) {
                admin(c, s);
            } else {
                io(c, s, op);
            }
        }

        private void fabrics(Command c, SubmissionQueueEntry s) {
            FabricsCommandType t = FabricsCommandType.of(s.fctype());
            if (t == FabricsCommandType.CONNECT) {
                responded(c, Status.SUCCESS, qid == 0 ? port.cntlidBase + port.cntlids.getAndIncrement() : 0);
            } else if (t == FabricsCommandType.PROPERTY_GET) {
                long off = s.propertyOffset();
                long v = off == Registers.CAP ? Registers.cap(128, 20) : off == Registers.VS ? Registers.VERSION_1_4
                        : off == Registers.CSTS ? (ready ? Registers.CSTS_RDY : 0) | (shutDown ? 2 << 2 : 0) : 0;
                responded(c, Status.SUCCESS, v);
            } else if (t == FabricsCommandType.PROPERTY_SET) {
                ready = (s.propertyValue() & 1) != 0;
                shutDown = ((s.propertyValue() >>> 14) & 3) != 0; // CC.SHN: shutdown is complete at once
                responded(c, Status.SUCCESS, 0);
            } else {
                responded(c, Status.INVALID_FIELD, 0);
            }
        }

        private void admin(Command c, SubmissionQueueEntry s) {
            int op = s.opcode();
            if (op == AdminOpcode.IDENTIFY.code) {
                ByteBuffer page = ByteBuffer.allocate(IdentifyCns.DATA_SIZE).order(ByteOrder.LITTLE_ENDIAN);
                int cns = s.identifyCns();
                if (cns == IdentifyCns.CONTROLLER) {
                    new IdentifyController().<IdentifyController>wrap(page, 0).serialNumber("FAKE0001").modelNumber("fake").firmwareRevision("1")
                            .mdts(5).cntlid(0).version(Registers.VERSION_1_4).cmic(1 << 1 | 1 << 3).oaes(1 << 11)
                            .anatt(10).anacap(0x1f).anagrpmax(1).nanagrpid(1).mnan(1).nn(1).sqes(0x66).cqes(0x44)
                            .maxcmd(128).sgls(0x100005).subsystemNqn(port.volume.nqn).ioccsz(4).iorcsz(1).kas(10);
                } else if (cns == IdentifyCns.ACTIVE_NAMESPACE_LIST) {
                    if (s.nsid() < 1) {
                        page.putInt(0, 1);
                    }
                } else if (cns == IdentifyCns.NAMESPACE && port.dropOnIdentifyNamespace) {
                    port.dropOnIdentifyNamespace = false;
                    end(new IOException("port " + port.name + " dropped the connection"));
                    return;
                } else if (cns == IdentifyCns.NAMESPACE && s.nsid() == 1) {
                    long n = port.volume.blocks();
                    new IdentifyNamespace().<IdentifyNamespace>wrap(page, 0).nsze(n).ncap(n).nuse(n).nlbaf(0).flbas(0).nmic(1)
                            .anagrpid(1).nguid(port.volume.nguid).lbaFormat(0, 0, 12, 0);
                }
                deliver(c, page);
            } else if (op == AdminOpcode.SET_FEATURES.code) {
                long r = s.featureId() == FeatureId.NUMBER_OF_QUEUES ? (s.requestedSubmissionQueues() - 1)
                        | (long) (s.requestedCompletionQueues() - 1) << 16 : 0;
                responded(c, Status.SUCCESS, r);
            } else if (op == AdminOpcode.ASYNC_EVENT_REQUEST.code) {
                Integer pending = pendingNotices.poll();
                if (pending != null) {
                    responded(c, Status.SUCCESS, pending);
                } else {
                    events.add(c);
                }
            } else if (op == AdminOpcode.GET_LOG_PAGE.code) {
                ByteBuffer page = ByteBuffer.allocate(Math.max(c.length, 64)).order(ByteOrder.LITTLE_ENDIAN);
                if (LogPage.lid(s) == LogPage.ANA) {
                    port.anaLogReads.incrementAndGet();
                    if (port.holdAnaLog) {
                        port.heldAnaLogs.add(() -> loop.execute(() -> anaLog(c, page)));
                        return;
                    }
                    anaLog(c, page);
                    return;
                }
                deliver(c, page);
            } else {
                responded(c, Status.SUCCESS, 0); // Keep Alive, and whatever else a test does not look at
            }
        }

        private void anaLog(Command c, ByteBuffer page) {
            AnaLog.header(page, port.anaChanges, 1);
            AnaLog.descriptor(page, AnaLog.HEADER_SIZE, 1, port.anaChanges, port.ana, new int[] {1}, 1);
            deliver(c, page);
        }

        private void io(Command c, SubmissionQueueEntry s, int op) {
            port.ios.incrementAndGet();
            if (op != NvmOpcode.READ.code && op != NvmOpcode.WRITE.code) {
                responded(c, Status.SUCCESS, 0); // Flush and the like
                return;
            }
            if (port.ana != AnaLog.OPTIMIZED && port.ana != AnaLog.NON_OPTIMIZED) {
                responded(c, port.ana == AnaLog.INACCESSIBLE ? Status.ANA_INACCESSIBLE : Status.ANA_TRANSITION, 0);
                return;
            }
            int at = (int) (s.slba() * 4096);
            ByteBuffer vol = port.volume.data;
            if (op == NvmOpcode.WRITE.code) {
                synchronized (vol) {
                    vol.duplicate().position(at).put(c.data.duplicate().limit(c.data.position() + c.length));
                }
                responded(c, Status.SUCCESS, 0);
            } else {
                ByteBuffer from;
                synchronized (vol) {
                    from = ByteBuffer.allocate(c.length);
                    from.put(vol.duplicate().position(at).limit(at + c.length)).flip();
                }
                deliver(c, from);
            }
        }

        /** Copies {@code from} into the command's buffer (as much as it asked for) and completes it. */
        private void deliver(Command c, ByteBuffer from) {
            int n = Math.min(c.length, from.capacity());
            c.data.duplicate().put(from.duplicate().position(0).limit(n));
            c.received = c.length;
            responded(c, Status.SUCCESS, 0);
        }
    }
}
