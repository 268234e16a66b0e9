package io.nvmeof.initiator;

import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.RdmaTuning;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** How to connect: identity, queues, timeouts, digests. Defaults suit a LAN target. */
public final class ConnectOptions {
    HostIdentity identity;
    int ioQueues = Math.min(4, Runtime.getRuntime().availableProcessors());
    int queueSize = 128;
    Duration keepAlive = Duration.ofSeconds(5);
    boolean persistentDiscovery;
    Duration commandTimeout = Duration.ofSeconds(30);
    Duration connectTimeout = Duration.ofSeconds(10);
    Duration controllerLossTimeout = Duration.ofSeconds(600);
    Duration reconnectDelay = Duration.ofSeconds(10);
    boolean registerUserBuffers = true;
    boolean headerDigest;
    boolean dataDigest;
    BusyPoll busyPoll = BusyPoll.ADAPTIVE;
    EventLoops.Engine ioEngine = EventLoops.Engine.EPOLL;
    io.netty.channel.EventLoopGroup eventLoops;
    boolean rdmaBusyPoll = RdmaTuning.DEFAULTS.busyPoll();
    int disniCqSize = RdmaTuning.DEFAULTS.disniCqSize();
    int disniInitiatorDepth = RdmaTuning.DEFAULTS.disniInitiatorDepth();
    DhchapKey dhchapKey;
    DhchapKey dhchapControllerKey;
    List<DhGroup> dhchapDhGroups = DEFAULT_DH_GROUPS;
    TlsPsk tlsKey;
    TlsPsk.Derivation tlsDerivation = TlsPsk.Derivation.RFC8446;
    int tlsIdentityVersion;
    Multipath.Policy ioPolicy = Multipath.Policy.NUMA;
    Duration noPathTimeout;

    /** The wait before the first reconnect attempt after a loss (see {@link #reconnectDelay(Duration)}). */
    public static final Duration FIRST_RECONNECT_DELAY = Duration.ofMillis(100);

    public static ConnectOptions defaults() {
        return new ConnectOptions();
    }

    public ConnectOptions identity(HostIdentity id) {
        this.identity = id;
        return this;
    }

    public HostIdentity identity() {
        if (identity == null) {
            identity = HostIdentity.system();
        }
        return identity;
    }

    /**
     * The host's event loops poll without sleeping (native epoll): the lowest latency, a core per
     * loop spinning (there is a loop per I/O queue, at most one per core); false: they sleep
     * whenever nothing is ready. The default is neither: {@link BusyPoll#ADAPTIVE}.
     */
    public ConnectOptions busyPoll(boolean on) {
        return busyPoll(on ? BusyPoll.ALWAYS : BusyPoll.OFF);
    }

    /** How the host's event loops wait for I/O ({@link BusyPoll}; default {@link BusyPoll#ADAPTIVE}). */
    public ConnectOptions busyPoll(BusyPoll poll) {
        this.busyPoll = Objects.requireNonNull(poll, "poll");
        return this;
    }

    /**
     * Netty's I/O transport for the controller's event loops, as the target's {@code io_engine}:
     * {@code EPOLL} (the default), {@code IO_URING} or {@code NIO}. io_uring falls back to epoll
     * where the kernel refuses it (logged), epoll to NIO off Linux. Each controller has loops of
     * its own, so controllers in one process, and a target beside them, may run on different engines.
     */
    public ConnectOptions ioEngine(EventLoops.Engine engine) {
        this.ioEngine = Objects.requireNonNull(engine, "engine");
        return this;
    }

    /**
     * Run the controller's queues on the caller's event loops instead of loops of its own: a
     * server that takes requests on those loops (an NBD export, say) then hands each command to
     * the queue on its own thread, without waking another. The caller owns the loops: closing the
     * controller leaves them running, and {@link #busyPoll} and {@link #ioEngine} do not apply.
     * Their channels are the engine's the loops run ({@link EventLoops#clientChannel}). Null (the
     * default): the process's shared loops, a loop per core for every controller that waits the
     * same way on the same engine, made with the first and ended with the last.
     */
    public ConnectOptions eventLoops(io.netty.channel.EventLoopGroup group) {
        this.eventLoops = group;
        return this;
    }

    /**
     * New loops for these options: a loop per I/O queue up to one per core, waiting as
     * {@link #busyPoll} says, on {@link #ioEngine}. For a server that shares its loops with its
     * controllers ({@link #eventLoops}); the caller shuts them down.
     */
    public io.netty.channel.EventLoopGroup newEventLoops(String threadName) {
        int threads = Math.max(1, Math.min(ioQueues, Runtime.getRuntime().availableProcessors()));
        return EventLoops.newGroup(threads, threadName, busyPoll, ioEngine);
    }

    /**
     * NVMe/RDMA on the {@code verbs} provider: the event loops poll the completion queues instead
     * of waiting for completion events (lower latency, a busy core; the target's
     * {@code rdma_busy_poll}). Off by default.
     */
    public ConnectOptions rdmaBusyPoll(boolean on) {
        this.rdmaBusyPoll = on;
        return this;
    }

    /**
     * NVMe/RDMA on the {@code disni} provider: entries of its shared completion queue, 256 to
     * 1048576 (16384 by default; the target's {@code disni_cq_size}). A connection needing more
     * gets a queue of its own.
     */
    public ConnectOptions disniCqSize(int entries) {
        if (entries < 256 || entries > 1 << 20) {
            throw new IllegalArgumentException("disniCqSize must be 256..1048576: " + entries);
        }
        this.disniCqSize = entries;
        return this;
    }

    /**
     * NVMe/RDMA on the {@code disni} provider: RDMA READs it assumes the target lets it have
     * outstanding, 1 to 255 (1 by default, the only depth safe with every peer, since DiSNI cannot
     * ask; the target's {@code disni_initiator_depth}).
     */
    public ConnectOptions disniInitiatorDepth(int depth) {
        if (depth < 1 || depth > 255) {
            throw new IllegalArgumentException("disniInitiatorDepth must be 1..255: " + depth);
        }
        this.disniInitiatorDepth = depth;
        return this;
    }

    /** How the controller's RDMA provider is tuned. */
    RdmaTuning rdmaTuning() {
        return new RdmaTuning(rdmaBusyPoll, disniCqSize, disniInitiatorDepth);
    }

    /** I/O queues (one TCP connection each) to ask for; the target may grant fewer. */
    public ConnectOptions ioQueues(int n) {
        if (n < 1 || n > 65535) {
            throw new IllegalArgumentException("ioQueues must be 1..65535: " + n);
        }
        this.ioQueues = n;
        return this;
    }

    /** Entries per I/O queue (capped by the target's CAP.MQES + 1). */
    public ConnectOptions queueSize(int n) {
        if (n < 2 || n > 4096) {
            throw new IllegalArgumentException("queueSize must be 2..4096: " + n);
        }
        this.queueSize = n;
        return this;
    }

    /** Keep-alive timeout (KATO); keep-alives go out at half of it. Zero disables. */
    public ConnectOptions keepAlive(Duration d) {
        this.keepAlive = d;
        return this;
    }

    /**
     * A discovery controller held open (nvme-cli's {@code --persistent}, nvme-stas' connections):
     * it asks for the keep-alive timeout of {@link #keepAlive} and keeps it alive, as a registrant
     * with a central discovery controller must; off (the default), a discovery connection is
     * one-shot and asks for none, as nvme-cli's is.
     */
    public ConnectOptions persistentDiscovery(boolean on) {
        this.persistentDiscovery = on;
        return this;
    }

    public ConnectOptions commandTimeout(Duration d) {
        this.commandTimeout = d;
        return this;
    }

    public ConnectOptions connectTimeout(Duration d) {
        this.connectTimeout = d;
        return this;
    }

    /**
     * How long to keep reconnecting after a lost connection before failing the commands that
     * wait (Linux's ctrl_loss_tmo, 600 s by default). Zero: fail at once, no reconnect.
     */
    public ConnectOptions controllerLossTimeout(Duration d) {
        this.controllerLossTimeout = d;
        return this;
    }

    /** How a {@link Multipath} set chooses among its usable paths (Linux's iopolicy; numa by default). */
    public ConnectOptions ioPolicy(Multipath.Policy p) {
        this.ioPolicy = Objects.requireNonNull(p, "policy");
        return this;
    }

    /**
     * How long a command of a {@link Multipath} set waits while no path can take it before it
     * fails (default: the controller loss timeout, as Linux queues I/O while any path may return).
     */
    public ConnectOptions noPathTimeout(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("noPathTimeout must not be negative");
        }
        this.noPathTimeout = d;
        return this;
    }

    /**
     * The longest wait between reconnect attempts (Linux's reconnect_delay, 10 s by default). The
     * first attempt after a loss comes {@link #FIRST_RECONNECT_DELAY} later (or this, if shorter),
     * and each failed attempt doubles the wait, up to this: a target that restarts in a second, or
     * an attempt broken while it was being set up, costs a second, not a whole delay; one that
     * stays down is asked every delay.
     */
    public ConnectOptions reconnectDelay(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("reconnectDelay must not be negative");
        }
        this.reconnectDelay = d;
        return this;
    }

    /**
     * The host's DH-HMAC-CHAP key ({@code DHHC-1:...}, as {@code nvme gen-dhchap-key} writes it),
     * used when the controller asks the host to authenticate; null for none.
     */
    public ConnectOptions dhchapSecret(DhchapKey key) {
        this.dhchapKey = key;
        return this;
    }

    /**
     * The controller's key: with it the host also makes the controller prove who it is
     * (bidirectional authentication) and refuses a controller that cannot. Needs
     * {@link #dhchapSecret}.
     */
    public ConnectOptions dhchapControllerSecret(DhchapKey key) {
        this.dhchapControllerKey = key;
        return this;
    }

    /**
     * The DH groups of DH-HMAC-CHAP the host offers: every ffdhe group by default, and not the
     * NULL group, whose exchange has no Diffie-Hellman part: list {@link DhGroup#NULL} here for a
     * target that takes nothing else (a Linux nvmet host entry left at its NULL group, say).
     */
    public static final List<DhGroup> DEFAULT_DH_GROUPS = List.of(DhGroup.FFDHE2048, DhGroup.FFDHE3072,
            DhGroup.FFDHE4096, DhGroup.FFDHE6144, DhGroup.FFDHE8192);

    /** The DH groups to offer ({@link #DEFAULT_DH_GROUPS} unless set); at least one. */
    public ConnectOptions dhchapDhGroups(List<DhGroup> groups) {
        if (groups.isEmpty()) {
            throw new IllegalArgumentException("dhchapDhGroups needs at least one group");
        }
        this.dhchapDhGroups = List.copyOf(groups);
        return this;
    }

    public List<DhGroup> dhchapDhGroups() {
        return dhchapDhGroups;
    }

    /**
     * NVMe/TCP over TLS 1.3 with this configured PSK ({@code NVMeTLSkey-1:...}, as {@code nvme
     * gen-tls-key} prints it); null: no TLS. The TLS PSK is derived for this host and the
     * subsystem, with {@link #tlsDerivation} and the identity of {@link #tlsIdentityVersion}.
     */
    public ConnectOptions tls(TlsPsk key) {
        this.tlsKey = key;
        return this;
    }

    /**
     * How the TLS PSK is derived from the configured one: RFC 8446's HKDF labels (the default; SPDK,
     * newer nvme-cli) or libnvme's older ones ({@code COMPAT}: the keys nvme-cli 2.13 of Debian 13
     * puts in the kernel keyring, which a Linux target then uses).
     */
    public ConnectOptions tlsDerivation(TlsPsk.Derivation d) {
        this.tlsDerivation = d;
        return this;
    }

    /** PSK identity version: 0 ({@code NVMe0R0X host sub}, the default, what Linux 6.12 uses) or 1 (with a digest). */
    public ConnectOptions tlsIdentityVersion(int v) {
        if (v != 0 && v != 1) {
            throw new IllegalArgumentException("TLS identity version is 0 or 1, not " + v);
        }
        this.tlsIdentityVersion = v;
        return this;
    }

    public TlsPsk tlsKey() {
        return tlsKey;
    }

    public DhchapKey dhchapKey() {
        return dhchapKey;
    }

    public DhchapKey dhchapControllerKey() {
        return dhchapControllerKey;
    }

    public ConnectOptions headerDigest(boolean on) {
        this.headerDigest = on;
        return this;
    }

    public ConnectOptions dataDigest(boolean on) {
        this.dataDigest = on;
        return this;
    }

    /**
     * NVMe/RDMA: register the caller's direct buffers once (kept pinned and keyed in a cache)
     * and let the controller move data straight into and out of them (the default: up to 40%
     * more throughput at 128 KiB, see the README), or, with false, copy every transfer through
     * pre-registered bounce buffers. Heap buffers are always bounced. A cached buffer stays
     * registered, open to the controller's RDMA READ and WRITE, until the cache evicts it or
     * the controller closes; bounce buffers never expose the caller's memory.
     */
    public ConnectOptions registerUserBuffers(boolean on) {
        this.registerUserBuffers = on;
        return this;
    }

    /** The wait before reconnect attempt {@code failed + 1}, after {@code failed} attempts failed since the loss. */
    long reconnectDelayMillis(int failed) {
        long max = reconnectDelay.toMillis();
        long first = FIRST_RECONNECT_DELAY.toMillis();
        return failed >= 20 ? max : Math.min(max, first << failed);
    }
}
