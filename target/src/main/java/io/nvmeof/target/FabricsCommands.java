package io.nvmeof.target;

import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.FabricsCommandType;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tls.PskIdentity;
import java.nio.ByteBuffer;
import java.util.Objects;

/** Fabrics commands (NVMe-oF 1.1, 3): Connect, Property Get, Property Set. */
final class FabricsCommands {
    private static final System.Logger LOG = System.getLogger(FabricsCommands.class.getName());
    /** IATTR of a Connect Invalid Parameters response: the bad field is in the SQE (0) or the data (1). */
    private static final int IN_SQE = 0;
    private static final int IN_DATA = 1;

    private FabricsCommands() {
    }

    /**
     * What an admin queue takes: Connect (its first command), Property Get and Set. Chosen by
     * FCTYPE when the command is parsed; the handlers run with the queue's controller, which is
     * null before the Connect.
     */
    static final CommandSet ADMIN = new CommandSet("Fabrics (admin queue)",
            new CommandSet.Handler(FabricsCommandType.CONNECT.code, "Connect", (r, c) -> connect(r, r.queue)),
            new CommandSet.Handler(FabricsCommandType.PROPERTY_GET.code, "Property Get", FabricsCommands::propertyGet),
            new CommandSet.Handler(FabricsCommandType.PROPERTY_SET.code, "Property Set", FabricsCommands::propertySet),
            new CommandSet.Handler(FabricsCommandType.AUTHENTICATION_SEND.code, "Authentication Send", Authentication::send),
            new CommandSet.Handler(FabricsCommandType.AUTHENTICATION_RECEIVE.code, "Authentication Receive",
                    Authentication::receive));

    /** What any other queue takes (an I/O queue, or one not yet connected): Connect and authentication. */
    static final CommandSet OTHER = new CommandSet("Fabrics", ADMIN.handler(FabricsCommandType.CONNECT.code),
            ADMIN.handler(FabricsCommandType.AUTHENTICATION_SEND.code),
            ADMIN.handler(FabricsCommandType.AUTHENTICATION_RECEIVE.code));

    /** Connect response DW0 bit 17 (AUTHREQ.ATR): the host must authenticate the queue (Base 2.0, Figure 551). */
    static final long AUTHREQ_ATR = 1L << 17;

    /** The handler of a Fabrics command of type {@code fctype} on queue {@code qid}, or null: Invalid Command Opcode. */
    static CommandSet.Handler handler(int fctype, int qid) {
        return (qid == 0 ? ADMIN : OTHER).handler(fctype);
    }

    /** Refused Connects: a host can send them as fast as it likes, so their lines are rate-limited. */
    private static final RateLimitedLog REFUSED = new RateLimitedLog(LOG);

    private static void invalidParameter(Request r, QueuePair q, int offset, int attr, String why) {
        REFUSED.log(System.Logger.Level.INFO, "refused Connect from {0}: {1}", q.transport().peer(), why);
        r.result = (offset & 0xffff) | (long) attr << 16;
        q.complete(r, Status.CONNECT_INVALID_PARAMETERS);
    }

    private static void invalidHost(Request r, QueuePair q, String why) {
        REFUSED.log(System.Logger.Level.WARNING, "refused Connect from {0}: {1}", q.transport().peer(), why);
        r.result = ConnectData.HOSTNQN_OFFSET | (long) IN_DATA << 16;
        q.complete(r, Status.CONNECT_INVALID_HOST);
    }

    private static void connect(Request r, QueuePair q) {
        SubmissionQueueEntry sqe = r.sqe;
        if (q.qid() >= 0) {
            q.complete(r, Status.COMMAND_SEQUENCE_ERROR);
            return;
        }
        if (r.length != ConnectData.SIZE || r.data == null) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        if (sqe.connectRecfmt() != 0) {
            q.complete(r, Status.CONNECT_INCOMPATIBLE_FORMAT);
            return;
        }
        ByteBuffer copy = Flyweight.allocate(ConnectData.SIZE);
        r.data.getBytes(r.dataOffset, copy);
        ConnectData data = new ConnectData().wrap(copy, 0);
        Target target = q.target();
        String subnqn = data.subsystemNqn();
        String hostnqn = data.hostNqn();
        // names are checked before any is looked up or logged: a control byte never reaches a log line.
        // An empty host NQN is let in where any host is, as Linux nvmet and SPDK let it in: SPDK's
        // spdk_nvme_perf sends one unless its -r string names a hostnqn. No allow list can name it.
        String bad = hostnqn.isEmpty() ? null : Nqn.unusable(hostnqn);
        if (bad != null) {
            invalidHost(r, q, "host " + bad);
            return;
        }
        bad = Nqn.unusable(subnqn);
        if (bad != null) {
            invalidParameter(r, q, ConnectData.SUBNQN_OFFSET, IN_DATA, "subsystem " + bad);
            return;
        }
        if (Nqn.problem(hostnqn) != null) {
            ODD.log(System.Logger.Level.WARNING, "Connect from {0}: host {1}", q.transport().peer(), Nqn.problem(hostnqn));
        }
        Subsystem subsystem = target.subsystem(subnqn);
        if (subsystem == null || !subsystem.isDiscovery() && !q.port().serves(subnqn)) {
            invalidParameter(r, q, ConnectData.SUBNQN_OFFSET, IN_DATA, "no subsystem " + subnqn + " on " + q.port());
            return;
        }
        PskIdentity tls = q.transport().tlsIdentity();
        if (tls != null && (!tls.hostNqn().equals(hostnqn) || !tls.subNqn().equals(subnqn))) {
            // the secure channel was opened by one host for one subsystem: a Connect may not name others
            REFUSED.log(System.Logger.Level.WARNING, "refused Connect from {0}: host {1} to {2} on a TLS connection opened"
                    + " as host {3} for {4}", q.transport().peer(), hostnqn, subnqn, tls.hostNqn(), tls.subNqn());
            boolean host = !tls.hostNqn().equals(hostnqn);
            r.result = (host ? ConnectData.HOSTNQN_OFFSET : ConnectData.SUBNQN_OFFSET) | (long) IN_DATA << 16;
            q.complete(r, host ? Status.CONNECT_INVALID_HOST : Status.CONNECT_INVALID_PARAMETERS);
            return;
        }
        if (!subsystem.allows(hostnqn)) {
            invalidHost(r, q, "host " + hostnqn + " not allowed in " + subnqn);
            return;
        }
        int qid = sqe.connectQid();
        int sqsize = sqe.connectSqsize();
        if (subsystem.isDiscovery() && qid != 0) {
            invalidParameter(r, q, SubmissionQueueEntry.CONNECT_QID_OFFSET, IN_SQE, "I/O queue to the discovery subsystem");
            return;
        }
        if (sqsize == 0 || sqsize + 1 > target.tuning().maxQueueSize()) {
            invalidParameter(r, q, SubmissionQueueEntry.CONNECT_SQSIZE_OFFSET, IN_SQE, "SQSIZE " + sqsize);
            return;
        }
        String mismatch = q.transport().checkConnect(qid, sqsize);
        if (mismatch != null) {
            invalidParameter(r, q, mismatch.startsWith("QID") ? SubmissionQueueEntry.CONNECT_QID_OFFSET
                    : SubmissionQueueEntry.CONNECT_SQSIZE_OFFSET, IN_SQE, mismatch);
            return;
        }
        boolean noFlowControl = (sqe.connectCattr() & SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL) != 0;
        if (qid == 0) {
            if (data.cntlid() != ConnectData.CNTLID_DYNAMIC) {
                invalidParameter(r, q, ConnectData.CNTLID_OFFSET, IN_DATA, "static controller id " + data.cntlid());
                return;
            }
            // The controller is registered first and the host's keys read after: a reload that
            // changes them either comes before (and is seen here) or finds the controller and ends it.
            HostSecurity before = target.hostSecurity(hostnqn);
            // a discovery controller authenticates only on a central discovery controller, where
            // registrations come through it: there a host with a key proves itself as it does to a subsystem
            boolean authenticates = (!subsystem.isDiscovery() || target.options().get(Settings.CDC)) && before != null
                    && before.requiresAuthentication();
            Controller c = subsystem.newController(target, hostnqn, data.hostId(),
                    target.tuning().grantedKato(sqe.connectKato(), subsystem.isDiscovery()), !authenticates);
            if (c == null) {
                String taken = subsystem.hostIdTaken(data.hostId(), hostnqn);
                if (!subsystem.allows(hostnqn)) {
                    invalidHost(r, q, "host " + hostnqn + " not allowed in " + subnqn);
                } else if (taken != null) {
                    invalidParameter(r, q, ConnectData.HOSTID_OFFSET, IN_DATA, "host " + hostnqn + " presented host ID "
                            + data.hostId() + ", " + taken + " in " + subnqn);
                } else {
                    q.complete(r, Status.CONNECT_CONTROLLER_BUSY);
                }
                return;
            }
            HostSecurity h = target.hostSecurity(hostnqn);
            String refused = !HostSecurity.sameKeys(h, before) ? "the host's keys changed while it connected" : clearForTlsHost(subsystem, h, tls);
            if (refused != null) {
                c.destroy();
                invalidHost(r, q, "host " + hostnqn + ": " + refused);
                return;
            }
            if (subsystem.isDiscovery() && !q.toDiscovery()) {
                // discovery controllers have a cap of their own, apart from the I/O hosts' max_connections
                c.destroy();
                REFUSED.log(System.Logger.Level.WARNING, "refused Connect from {0}: {1} discovery controllers connected,"
                        + " the most the target takes (max_discovery_connections)", q.transport().peer(),
                        target.discoveryConnectionCount());
                q.complete(r, Status.CONNECT_CONTROLLER_BUSY);
                return;
            }
            q.connected(0, sqsize + 1, noFlowControl, c);
            c.secureChannel(tls == null ? null : tls.text());
            c.attachAdmin(q);
            r.result = c.cntlid() | requireAuthentication(q, c, authenticates);
            LOG.log(System.Logger.Level.INFO, "{0} connected from {1}{2}", c, q.transport().peer(),
                    authenticates ? "; authentication required" : "");
            q.complete(r, Status.SUCCESS);
            return;
        }
        Controller c = subsystem.controller(data.cntlid());
        if (c == null || !c.hostNqn().equals(hostnqn) || !c.hostId().equals(data.hostId())) {
            invalidParameter(r, q, ConnectData.CNTLID_OFFSET, IN_DATA,
                    "no controller " + data.cntlid() + " for host " + hostnqn);
            return;
        }
        // an I/O queue comes the way its admin queue came: through the same port, in the same secure channel
        Port adminPort = c.port();
        if (adminPort == null || adminPort.id() != q.port().id()) {
            invalidParameter(r, q, ConnectData.CNTLID_OFFSET, IN_DATA, "I/O queue for " + c + " through port "
                    + q.port().id() + ", its admin queue came through port " + (adminPort == null ? "none" : adminPort.id()));
            return;
        }
        if (!Objects.equals(tls == null ? null : tls.text(), c.tlsIdentity())) {
            invalidHost(r, q, "I/O queue for " + c + (tls == null ? " in the clear" : " with TLS identity " + tls.text())
                    + ", its admin queue came " + (c.tlsIdentity() == null ? "in the clear" : "with TLS identity "
                    + c.tlsIdentity()));
            return;
        }
        if (!c.ready()) {
            q.complete(r, Status.COMMAND_SEQUENCE_ERROR);
            return;
        }
        if (!c.installIoQueue(qid, q)) {
            invalidParameter(r, q, SubmissionQueueEntry.CONNECT_QID_OFFSET, IN_SQE,
                    "I/O queue " + qid + " is taken or beyond the " + c.grantedIoQueues() + " granted");
            return;
        }
        q.connected(qid, sqsize + 1, noFlowControl, c);
        HostSecurity h = target.hostSecurity(hostnqn);
        r.result = c.cntlid() | requireAuthentication(q, c, h != null && h.requiresAuthentication());
        q.complete(r, Status.SUCCESS);
    }

    /** Lines about host NQNs of an odd form (let in, as nvmet lets them in), rate-limited. */
    private static final RateLimitedLog ODD = new RateLimitedLog(LOG);

    /**
     * Why a host with a TLS key may not use this connection to an NVM subsystem (it is not TLS:
     * a cleartext port, an {@code optional} port used in the clear, NVMe/RDMA), or null. Such a
     * host proves itself by its PSK; a Connect that merely names it proves nothing.
     */
    private static String clearForTlsHost(Subsystem subsystem, HostSecurity h, PskIdentity tls) {
        if (subsystem.isDiscovery() || h == null || h.tlsKey() == null || tls != null) {
            return null;
        }
        return "it has a TLS key and must connect over TLS";
    }

    /**
     * ATR when the host has a DH-HMAC-CHAP key: it must authenticate this queue (every queue, as
     * SPDK asks); otherwise the queue is admitted now.
     */
    private static long requireAuthentication(QueuePair q, Controller c, boolean authenticates) {
        if (!authenticates) {
            q.admit();
            return 0;
        }
        q.requireAuthentication(c);
        return AUTHREQ_ATR;
    }

    private static void propertyGet(Request r, Controller c) {
        SubmissionQueueEntry sqe = r.sqe;
        QueuePair q = r.queue;
        long ofst = sqe.propertyOffset();
        int size = Registers.sizeOf(ofst);
        if (size < 0 || size != sqe.propertySize()) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        Target t = q.target();
        if (ofst == Registers.CAP) {
            r.result = Registers.cap(t.tuning().maxQueueSize(), t.tuning().readyTimeoutHalfSeconds());
        } else if (ofst == Registers.VS) {
            r.result = Registers.VERSION_1_4;
        } else if (ofst == Registers.CC) {
            r.result = c.cc() & 0xffffffffL;
        } else if (ofst == Registers.CSTS) {
            r.result = c.csts() & 0xffffffffL;
        } else {
            r.result = 0;
        }
        q.complete(r, Status.SUCCESS);
    }

    private static void propertySet(Request r, Controller c) {
        SubmissionQueueEntry sqe = r.sqe;
        QueuePair q = r.queue;
        if (sqe.propertyOffset() != Registers.CC || sqe.propertySize() != 4) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        c.writeCc((int) sqe.propertyValue());
        q.complete(r, Status.SUCCESS);
    }
}
