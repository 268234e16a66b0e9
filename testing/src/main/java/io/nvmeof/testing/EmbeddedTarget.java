package io.nvmeof.testing;

import io.nvmeof.protocol.Status;
import io.nvmeof.target.Faults;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.BackendSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An NVMe/TCP target in this JVM for an application's tests: one subsystem with RAM (or other)
 * namespaces on an ephemeral loopback port, and faults to inject while the application runs
 * against it.
 *
 * <pre>{@code
 * try (EmbeddedTarget target = EmbeddedTarget.builder().ramNamespace(64 << 20).start()) {
 *     try (Controller c = Nvmeof.connect(target.uri())) {
 *         BlockDevice disk = c.namespace(1);
 *         target.dropConnections();            // the application's connections end, as if the network failed
 *         target.namespace(1).delay(Duration.ofMillis(50));
 *         target.failNext(NvmOpcode.WRITE.code, 2, Status.WRITE_FAULT);
 *     }
 * }
 * }</pre>
 *
 * <p>It is a real target: the same code, protocol and validation as {@code nvmeof target}, so a
 * Linux host or nvme-cli can connect to it too. Fault methods return the {@link Faults.Rule} they
 * set, which {@link Faults.Rule#remove()} lifts; {@link #clearFaults()} lifts them all.
 */
public final class EmbeddedTarget implements AutoCloseable {
    /** The subsystem NQN unless the builder is given one. */
    public static final String DEFAULT_NQN = "nqn.2026-11.io.nvmeof:testing";

    private final Target target;
    private final Subsystem subsystem;
    private final InetSocketAddress address;
    private final Scope everything;

    private EmbeddedTarget(Builder b) throws IOException {
        target = new Target(b.options);
        try {
            subsystem = new Subsystem(b.nqn, "EMBEDDED0001", "nvmeof-java embedded target", "1.0");
            if (b.hosts.isEmpty()) {
                subsystem.allowAnyHost(true);
            } else {
                b.hosts.forEach(subsystem::allowHost);
            }
            List<Backend> backends = b.open();
            for (int i = 0; i < backends.size(); i++) {
                subsystem.addNamespace(new Namespace(b.nqn, i + 1, backends.get(i), b.specs.get(i).readOnly(), null));
            }
            target.addSubsystem(subsystem);
            address = target.listenTcp(new InetSocketAddress(b.bindAddress, b.port));
        } catch (IOException | RuntimeException e) {
            target.close();
            throw e;
        }
        everything = new Scope(this, Faults.Match.all().subsystem(b.nqn));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The address to connect to: {@code nvme+tcp://127.0.0.1:PORT/NQN}, what {@code Nvmeof.connect} takes. */
    public String uri() {
        return "nvme+tcp://" + address.getAddress().getHostAddress() + ":" + address.getPort() + "/" + subsystem.nqn();
    }

    /** The bound address (an ephemeral port unless the builder named one). */
    public InetSocketAddress address() {
        return address;
    }

    public String subsystemNqn() {
        return subsystem.nqn();
    }

    /** The target itself, for what this class does not wrap. */
    public Target target() {
        return target;
    }

    /** The subsystem it serves. */
    public Subsystem subsystem() {
        return subsystem;
    }

    /** The whole rule engine (matches by host, opcode, NSID, admin or I/O queue). */
    public Faults faults() {
        return target.faults();
    }

    /** Faults for namespace {@code nsid}: its I/O commands, its write protection and size. */
    public NamespaceScope namespace(int nsid) {
        if (subsystem.namespace(nsid) == null) {
            throw new IllegalArgumentException("no namespace " + nsid + " in " + subsystem.nqn());
        }
        return new NamespaceScope(this, nsid);
    }

    /** Faults for host {@code hostNqn}'s connections only. */
    public Scope host(String hostNqn) {
        return new Scope(this, everything.match.host(Objects.requireNonNull(hostNqn, "hostNqn")));
    }

    /** Adds {@code delay} before every I/O command runs. */
    public Faults.Rule delay(Duration delay) {
        return everything.delay(delay);
    }

    /** Fails the next {@code count} I/O commands with {@code opcode} (e.g. {@code NvmOpcode.WRITE.code}) with {@code status}. */
    public Faults.Rule failNext(int opcode, int count, Status status) {
        return everything.failNext(opcode, count, status);
    }

    /** Fails the next {@code count} admin commands with {@code opcode} (e.g. {@code AdminOpcode.IDENTIFY.code}) with {@code status}. */
    public Faults.Rule failNextAdmin(int opcode, int count, Status status) {
        return faults().fail(everything.match.queues(Faults.Queues.ADMIN).opcode(opcode), count, status);
    }

    /**
     * Stops answering: every command that arrives from now on (Keep Alive and Connect too) is held
     * unanswered until {@link #resume()}. The connections stay up.
     */
    public Faults.Rule stall() {
        return everything.stall();
    }

    /** Lifts every stall: the held commands run now. */
    public void resume() {
        faults().resume();
    }

    /** Ends every connection to the subsystem now, as a failed network would; returns how many controllers ended. */
    public int dropConnections() {
        return everything.dropConnections();
    }

    /** Sends an asynchronous event to every controller (see {@link Faults#asyncEvent}); returns how many got it. */
    public int asyncEvent(int type, int info, int logPage) {
        return everything.asyncEvent(type, info, logPage);
    }

    /** Lifts every fault rule (held commands go on). Write protection and sizes stay as set. */
    public void clearFaults() {
        faults().clear();
    }

    /** Stops the target: its connections end, its RAM is freed. */
    @Override
    public void close() throws IOException {
        target.close();
    }

    @Override
    public String toString() {
        return "EmbeddedTarget " + uri();
    }

    /** Faults for the commands one {@link Faults.Match} selects. */
    public static class Scope {
        final EmbeddedTarget owner;
        final Faults.Match match;

        Scope(EmbeddedTarget owner, Faults.Match match) {
            this.owner = owner;
            this.match = match;
        }

        /** Adds {@code delay} before each of these I/O commands runs. */
        public Faults.Rule delay(Duration delay) {
            return owner.faults().delay(ioOnly(), delay);
        }

        /** Fails the next {@code count} of these I/O commands with {@code opcode} with {@code status}. */
        public Faults.Rule failNext(int opcode, int count, Status status) {
            return owner.faults().fail(ioOnly().opcode(opcode), count, status);
        }

        /** Holds these commands unanswered until {@link EmbeddedTarget#resume()}. */
        public Faults.Rule stall() {
            return owner.faults().stall(match);
        }

        /** Ends these controllers' connections now; returns how many controllers ended. */
        public int dropConnections() {
            return owner.faults().dropConnections(match);
        }

        /** Sends an asynchronous event to these controllers. */
        public int asyncEvent(int type, int info, int logPage) {
            return owner.faults().asyncEvent(match, type, info, logPage);
        }

        private Faults.Match ioOnly() {
            return match.queues(Faults.Queues.IO);
        }
    }

    /** Faults for one namespace: its I/O commands, and its state. */
    public static final class NamespaceScope extends Scope {
        private final int nsid;

        NamespaceScope(EmbeddedTarget owner, int nsid) {
            super(owner, owner.everything.match.queues(Faults.Queues.IO).nsid(nsid));
            this.nsid = nsid;
        }

        /**
         * Write-protects the namespace, or lifts it: writes fail with Namespace is Write Protected and
         * hosts get a namespace attribute notice (Identify Namespace then shows NSATTR bit 0).
         */
        public void readOnly(boolean readOnly) {
            owner.subsystem.readOnly(nsid, readOnly);
        }

        /** Changes the namespace's size in place (data kept up to the smaller size); hosts get a namespace attribute notice. */
        public void resize(long bytes) {
            try {
                owner.subsystem.resize(nsid, bytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The namespace as the target has it (size, write protection, I/O counts). */
        public Namespace namespace() {
            return owner.subsystem.namespace(nsid);
        }
    }

    /** How to build one: namespaces (in NSID order from 1), hosts let in, options, address. */
    public static final class Builder {
        private String nqn = DEFAULT_NQN;
        private final List<BackendSpec> specs = new ArrayList<>();
        private final Set<String> hosts = new LinkedHashSet<>();
        private Target.Options options = Target.Options.defaults();
        private String bindAddress = "127.0.0.1";
        private int port;

        private Builder() {
        }

        public Builder subsystemNqn(String nqn) {
            this.nqn = Objects.requireNonNull(nqn, "nqn");
            return this;
        }

        /** A RAM namespace of {@code bytes} with 4 KiB blocks (its memory is taken at start). */
        public Builder ramNamespace(long bytes) {
            return ramNamespace(bytes, 4096);
        }

        /** A RAM namespace of {@code bytes} with {@code blockSize}-byte blocks (512 or 4096). */
        public Builder ramNamespace(long bytes, int blockSize) {
            if (blockSize != 512 && blockSize != 4096) {
                throw new IllegalArgumentException("blockSize must be 512 or 4096: " + blockSize);
            }
            specs.add(new BackendSpec("ram", null, bytes, blockSize, false, false));
            return this;
        }

        /**
         * A namespace by the spec {@code nvmeof target --ns} takes: {@code ram:64M},
         * {@code null:1G}, {@code file:/path[,size=1G]}, {@code block:/dev/...}.
         */
        public Builder namespace(String spec) {
            specs.add(BackendSpec.parse(spec)); // its mistakes now, not at start
            return this;
        }

        /** Lets only the hosts named here in (by host NQN); by default any host. */
        public Builder allowHost(String hostNqn) {
            hosts.add(Objects.requireNonNull(hostNqn, "hostNqn"));
            return this;
        }

        /** Target settings (by default the target's defaults, as {@code nvmeof target} has them). */
        public Builder options(Target.Options options) {
            this.options = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Where to listen: loopback and an ephemeral port unless told. */
        public Builder listen(String address, int port) {
            this.bindAddress = Objects.requireNonNull(address, "address");
            this.port = port;
            return this;
        }

        /** Starts the target; it listens when this returns. */
        public EmbeddedTarget start() throws IOException {
            return new EmbeddedTarget(this);
        }

        /** The namespaces' backends, in order (one 64 MiB RAM namespace if none was asked for). */
        private List<Backend> open() throws IOException {
            if (specs.isEmpty()) {
                ramNamespace(64 << 20);
            }
            List<Backend> backends = new ArrayList<>();
            try {
                for (BackendSpec spec : specs) {
                    backends.add(spec.open());
                }
            } catch (IOException | RuntimeException e) {
                for (Backend b : backends) {
                    b.close();
                }
                throw e;
            }
            return backends;
        }
    }
}
