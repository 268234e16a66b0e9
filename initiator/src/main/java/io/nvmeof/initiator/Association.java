package io.nvmeof.initiator;

import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One association with a controller (NVMe-oF 1.1, 3.2): the admin queue brought up (Connect,
 * CAP and VS, CC.EN, CSTS.RDY, keep-alive, Identify Controller, Number of Queues) and the I/O
 * queues connected, torn down as a whole. A controller has one live association at a time;
 * recovery builds a new one.
 */
final class Association {
    private static final System.Logger LOG = System.getLogger(Association.class.getName());
    static final int ADMIN_QUEUE_SIZE = 32;

    final HostQueue admin;
    final HostQueue[] ioQueues;
    final int cntlid;
    final long cap;
    final int version;
    final IdentifyController identify;
    /** I/O queue entries. */
    final int queueSize;
    private final ScheduledFuture<?> keepAlive;

    private Association(HostQueue admin, HostQueue[] ioQueues, int cntlid, long cap, int version,
                        IdentifyController identify, int queueSize, ScheduledFuture<?> keepAlive) {
        this.admin = admin;
        this.ioQueues = ioQueues;
        this.cntlid = cntlid;
        this.cap = cap;
        this.version = version;
        this.identify = identify;
        this.queueSize = queueSize;
        this.keepAlive = keepAlive;
    }

    /** Brings up an association with the controller {@code c} is for; a discovery controller gets no I/O queues. */
    static Association establish(Controller c, HostTransport transport) throws IOException {
        NvmeofUri uri = c.uri();
        ConnectOptions options = c.options();
        InetSocketAddress address = uri.address();
        if (address.isUnresolved()) {
            throw new IOException("cannot resolve host " + uri.host());
        }
        HostIdentity id = options.identity();
        HostQueue a = Controller.await(transport.openQueue(address, 0, ADMIN_QUEUE_SIZE - 1, TcpQueue.ADMIN_IN_CAPSULE, 0),
                "connect to " + address, options.connectTimeout.toMillis());
        boolean discovery = c.isDiscovery();
        // a one-shot discovery connection needs no keep alive (nvme-cli does the same); a persistent one does
        long kato = discovery && !options.persistentDiscovery ? 0 : options.keepAlive.toMillis();
        ScheduledFuture<?> keepAlive = null;
        try { // until it is published, only bring-up talks to this admin queue
            int cntlid = (int) connect(c, a, ADMIN_QUEUE_SIZE, ConnectData.CNTLID_DYNAMIC, kato, id) & 0xffff;
            long cap = c.run(a, propertyGet(Registers.CAP, 8)).result();
            int version = (int) c.run(a, propertyGet(Registers.VS, 4)).result();
            c.run(a, propertySet(Registers.CC, Registers.ccEnable()));
            waitReady(c, a, cap);
            if (kato > 0) {
                // from here the target counts KATO: keep it alive while the rest is set up
                long period = Math.max(kato / 2, 100);
                keepAlive = a.eventLoop().scheduleAtFixedRate(() -> sendKeepAlive(c, a), period, period,
                        TimeUnit.MILLISECONDS);
            }
            ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
            c.run(a, identifyCommand(IdentifyCns.CONTROLLER, 0, page));
            IdentifyController identify = new IdentifyController().wrap(page, 0);
            if (discovery) {
                return new Association(a, new HostQueue[0], cntlid, cap, version, identify, 0, keepAlive);
            }
            int want = options.ioQueues;
            Command nq = Command.of("Set Features (Number of Queues)",
                    q -> q.opcode(AdminOpcode.SET_FEATURES.code).numberOfQueues(want, want));
            long granted = c.run(a, nq).result();
            int queues = Math.min(want, Math.min((int) (granted & 0xffff), (int) ((granted >>> 16) & 0xffff)) + 1);
            int size = Math.min(options.queueSize, Registers.capMaxQueueEntries(cap));
            int inCapsule = (int) Math.max(0, identify.ioccsz() * 16 - 64);
            List<HostQueue> opened = new ArrayList<>();
            try {
                for (int qid = 1; qid <= queues; qid++) {
                    HostQueue q = Controller.await(transport.openQueue(address, qid, size - 1, inCapsule, cntlid),
                            "connect I/O queue " + qid, options.connectTimeout.toMillis());
                    opened.add(q);
                    connect(c, q, size, cntlid, 0, id);
                }
            } catch (IOException | RuntimeException e) {
                for (HostQueue q : opened) {
                    q.close();
                }
                throw e;
            }
            return new Association(a, opened.toArray(new HostQueue[0]), cntlid, cap, version, identify, size, keepAlive);
        } catch (IOException | RuntimeException e) {
            if (keepAlive != null) {
                keepAlive.cancel(false);
            }
            a.close();
            throw e;
        }
    }

    /** Fabrics Connect of {@code q}; returns the CQE's result (the CNTLID in its low 16 bits). */
    private static long connect(Controller c, HostQueue q, int size, int controllerId, long kato, HostIdentity id)
            throws IOException {
        NvmeofUri uri = c.uri();
        ByteBuffer data = Flyweight.allocate(ConnectData.SIZE);
        new ConnectData().<ConnectData>wrap(data, 0).hostId(id.hostId()).cntlid(controllerId)
                .subsystemNqn(uri.subsystemNqn()).hostNqn(id.hostNqn());
        Command cmd = Command.of("Connect (queue " + q.qid() + ")", s -> s.connect(q.qid(), size, 0, kato))
                .dataOut(data, ConnectData.SIZE);
        long result;
        try {
            result = c.run(q, cmd).result();
        } catch (NvmeStatusException e) {
            if (e.status().equals(Status.CONNECT_INVALID_HOST)) {
                throw new NvmeStatusException("Connect to " + uri.subsystemNqn() + " as host " + id.hostNqn()
                        + " (host not allowed, or it has a TLS key and came without TLS or by another way than its admin"
                        + " queue; the target's log says which)", e.status(), true);
            }
            if (e.status().equals(Status.CONNECT_INVALID_PARAMETERS) && (cmd.result() & 0xffff) == ConnectData.SUBNQN_OFFSET) {
                throw new NvmeStatusException("Connect to " + uri.subsystemNqn() + " (no such subsystem at "
                        + uri.host() + ":" + uri.port() + "; nvmeof discover nvme+tcp://" + uri.host() + ":" + uri.port()
                        + " lists the ones there)", e.status(), true);
            }
            throw e;
        }
        if ((result & AUTHREQ_ASCR) != 0) {
            throw new IOException("the controller of " + uri.subsystemNqn() + " asks for secure channel concatenation,"
                    + " which this host does not offer");
        }
        if ((result & AUTHREQ_ATR) != 0) {
            ConnectOptions o = c.options();
            Authenticated how = HostAuthentication.authenticate(c, q, id.hostNqn(), uri.subsystemNqn(), o);
            q.authenticated = how;
            if (q.qid() == 0) {
                LOG.log(System.Logger.Level.INFO, "{0}: authenticated with {1}, DH group {2}{3}", uri.subsystemNqn(),
                        how.hash(), how.dhGroup(), how.controllerAuthenticated() ? "; controller authenticated" : "");
            }
        } else if (q.qid() == 0 && c.options().dhchapControllerKey != null && !c.isDiscovery()) {
            // the host wants the controller to prove itself, and it did not even ask the host
            throw new IOException("the controller of " + uri.subsystemNqn() + " did not authenticate itself"
                    + " (a controller key was given, but the controller asks for no authentication)");
        }
        return result;
    }

    /** Connect response DW0 (NVMe Base 2.0, Figure 551): AUTHREQ.ATR and AUTHREQ.ASCR. */
    static final long AUTHREQ_ATR = 1L << 17;
    static final long AUTHREQ_ASCR = 1L << 18;

    private static void waitReady(Controller c, HostQueue a, long cap) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(Registers.capTimeoutMillis(cap), 500));
        while (true) {
            int csts = (int) c.run(a, propertyGet(Registers.CSTS, 4)).result();
            if ((csts & Registers.CSTS_CFS) != 0) {
                throw new IOException("controller fatal status (CSTS.CFS) while enabling");
            }
            if (Registers.cstsReady(csts)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("controller not ready within CAP.TO (" + Registers.capTimeoutMillis(cap) + " ms)");
            }
            sleep(10);
        }
    }

    static void sleep(long ms) throws InterruptedIOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted");
        }
    }

    private static void sendKeepAlive(Controller c, HostQueue a) {
        if (c.isClosed() || !a.isOpen()) {
            return;
        }
        Command ka = Command.admin(AdminOpcode.KEEP_ALIVE, "Keep Alive");
        // unanswered within KATO, the association is reset (a silent path: a partition), as Linux does
        ka.timeoutNanos = c.options().keepAlive.toNanos();
        a.submit(ka);
        ka.whenComplete((cmd, t) -> {
            if (t != null && !c.isClosed()) {
                LOG.log(System.Logger.Level.WARNING, "keep alive to " + c.uri() + " failed: " + t.getMessage());
            }
        });
    }

    static Command propertyGet(int offset, int size) {
        return Command.of("Property Get " + Integer.toHexString(offset), q -> q.propertyGet(offset, size));
    }

    static Command propertySet(int offset, int value) {
        return Command.of("Property Set " + Integer.toHexString(offset), q -> q.propertySet(offset, 4, value & 0xffffffffL));
    }

    static Command identifyCommand(int cns, int nsid, ByteBuffer into) {
        return Command.of("Identify (CNS " + cns + ")", q -> q.opcode(AdminOpcode.IDENTIFY.code).nsid(nsid).identifyCns(cns))
                .dataIn(into, IdentifyCns.DATA_SIZE);
    }

    /** Whether {@code q} is one of this association's queues. */
    boolean owns(HostQueue q) {
        if (q == admin) {
            return true;
        }
        for (HostQueue x : ioQueues) {
            if (x == q) {
                return true;
            }
        }
        return false;
    }

    /** Stops the keep-alive. */
    void stopKeepAlive() {
        if (keepAlive != null) {
            keepAlive.cancel(false);
        }
    }

    /** The controller's Command Quiesce Time in milliseconds (0: it reports none). */
    int cqtMillis() {
        return identify == null ? 0 : identify.cqt();
    }

    /**
     * Closes every connection of the association (they may be dead already); waits up to 5 s.
     * Where the controller reports a CQT, each connection ends with this side's FIN and the
     * controller's answering close (up to {@code confirmMillis}), and the result is when the
     * last of them came: the controller had noticed the loss of every queue by then (NVMe/TCP
     * only; 0 if any queue was not seen so).
     */
    long tearDown(long confirmMillis) {
        stopKeepAlive();
        boolean confirm = cqtMillis() > 0 && confirmMillis > 0;
        List<CompletableFuture<Long>> closing = new ArrayList<>();
        for (HostQueue q : ioQueues) {
            closing.add(confirm ? q.closeConfirmed(confirmMillis) : q.close().thenApply(v -> 0L));
        }
        closing.add(confirm ? admin.closeConfirmed(confirmMillis) : admin.close().thenApply(v -> 0L));
        try {
            CompletableFuture.allOf(closing.toArray(new CompletableFuture[0]))
                    .get(Math.max(5000, confirmMillis + 1000), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing queues: " + e);
            return 0;
        }
        long last = 0;
        for (CompletableFuture<Long> f : closing) {
            long at = f.join();
            if (at == 0) {
                return 0;
            }
            if (last == 0 || at - last > 0) {
                last = at;
            }
        }
        return last;
    }
}
