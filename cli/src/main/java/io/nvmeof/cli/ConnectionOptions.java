package io.nvmeof.cli;

import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.RdmaTuning;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Host-side options shared by every command that connects (names as in nvme-cli). */
final class ConnectionOptions {
    /** How every command that takes a URI describes it. */
    static final String URI_HELP = "nvme+tcp://HOST:PORT/<NQN>[?nsid=N] or"
            + " nvme+rdma://HOST:PORT/<NQN>[?nsid=N][&provider=verbs|disni|soft]; several HOST:PORT, comma-separated,"
            + " are paths to one subsystem (native multipath: ANA, failover)";

    @Option(names = {"-q", "--hostnqn"}, description = "Host NQN (default: /etc/nvme/hostnqn or one derived from the machine id).")
    String hostNqn;

    @Option(names = {"-I", "--hostid"}, description = "Host ID, a UUID (default: /etc/nvme/hostid or the host NQN's UUID).")
    UUID hostId;

    @Option(names = {"-i", "--nr-io-queues"}, description = "I/O queues to ask for (default: ${DEFAULT-VALUE}).")
    int ioQueues = Math.min(4, Runtime.getRuntime().availableProcessors());

    @Option(names = {"-Q", "--queue-size"}, description = "Entries per I/O queue (default: ${DEFAULT-VALUE}).")
    int queueSize = 128;

    @Option(names = {"-g", "--hdr-digest"}, description = "Enable the NVMe/TCP header digest.")
    boolean headerDigest;

    @Option(names = {"-G", "--data-digest"}, description = "Enable the NVMe/TCP data digest.")
    boolean dataDigest;

    @Option(names = "--io-timeout", paramLabel = "SECONDS", description = "Command timeout in seconds: a command not"
            + " answered by then is aborted, and the association reset if the abort fails (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds = 30;

    /**
     * {@code --timeout}, the old name of {@code --io-timeout}, on a command that connects: kept,
     * with a warning, until the next release. Not on {@code bench}, where {@code --timeout} is
     * fio's (the runtime).
     */
    void addDeprecatedTimeout(CommandLine.Model.CommandSpec spec) {
        spec.addOption(CommandLine.Model.OptionSpec.builder("--timeout").paramLabel("SECONDS").type(Integer.class)
                .description("The old name of --io-timeout, until the next release.")
                .setter(new CommandLine.Model.ISetter() {
                    @Override
                    public <T> T set(T value) {
                        if (value != null) {
                            timeoutSeconds = (Integer) value;
                            PrintWriter err = spec.commandLine().getErr();
                            err.println("nvmeof: --timeout is now --io-timeout; the old name goes in the next release");
                            err.flush();
                        }
                        return null;
                    }
                }).build());
    }

    @Option(names = "--connect-timeout", paramLabel = "SECONDS", description = "How long setting up a queue's connection"
            + " (TCP, TLS handshake, ICReq/ICResp, RDMA CM) may take (default: 10, or --io-timeout if less). A slow link or"
            + " an emulated machine may need more.")
    Integer connectTimeoutSeconds;

    @Option(names = "--ctrl-loss-tmo", description = "Seconds to keep reconnecting after a lost connection (default: ${DEFAULT-VALUE}; 0: none).")
    int ctrlLossSeconds = 600;

    @Option(names = "--reconnect-delay", description = "The longest wait, in seconds, between reconnect attempts: the first comes 0.1 s after"
            + " a loss, each next one waits twice as long, up to this (default: ${DEFAULT-VALUE}).")
    int reconnectDelaySeconds = 10;

    @Option(names = "--iopolicy", completionCandidates = Completions.IoPolicies.class, paramLabel = "POLICY", description = "With several paths: numa (the first usable"
            + " path, ANA-optimized first; the default), round-robin or queue-depth, as Linux's iopolicy.")
    String ioPolicy;

    @Option(names = "--no-path-tmo", paramLabel = "SECONDS", description = "With several paths: how long I/O waits"
            + " while no path can take it (default: --ctrl-loss-tmo).")
    Integer noPathSeconds;

    @Option(names = "--rdma-bounce-buffers", description = "NVMe/RDMA: copy data through pre-registered bounce buffers"
            + " instead of registering the data buffers once and letting the controller read and write them directly.")
    boolean bounceBuffers;

    @Option(names = "--busy-poll", completionCandidates = Completions.BusyPollModes.class, arity = "0..1", paramLabel = "MODE", fallbackValue = "always",
            description = "How the event loops wait. Default: adaptive (poll after each event for a window each loop"
                    + " sizes itself, up to 200 us; adaptive:MAX for another limit). Alone or always: never sleep, as SPDK"
                    + " does: the lowest latency, a whole core per I/O queue's loop. MICROS: a fixed window. off: sleep"
                    + " whenever nothing is ready.")
    String busyPoll;

    @Option(names = "--io-engine", completionCandidates = Completions.IoEngines.class, paramLabel = "epoll|io_uring|nio", description = "Netty's I/O transport for the"
            + " host's event loops, as the target's --io-engine (default: epoll; io_uring falls back to epoll where"
            + " refused, epoll to nio off Linux).")
    String ioEngine;

    @Option(names = "--rdma-busy-poll", arity = "0..1", paramLabel = "true|false", fallbackValue = "true",
            description = "NVMe/RDMA, verbs provider: poll the completion queues instead of waiting for completion"
                    + " events (lower latency, a busy core).")
    boolean rdmaBusyPoll;

    @Option(names = "--disni-cq-size", paramLabel = "N", description = "NVMe/RDMA, disni provider: entries of its shared"
            + " completion queue, 256..1048576 (default: ${DEFAULT-VALUE}); a connection needing more gets its own.")
    int disniCqSize = RdmaTuning.DEFAULTS.disniCqSize();

    @Option(names = "--disni-initiator-depth", paramLabel = "N", description = "NVMe/RDMA, disni provider: RDMA READs"
            + " it assumes the target lets it have outstanding, 1..255 (default: ${DEFAULT-VALUE}, the only depth"
            + " safe with every peer: DiSNI cannot ask).")
    int disniInitiatorDepth = RdmaTuning.DEFAULTS.disniInitiatorDepth();

    @Option(names = {"-S", "--dhchap-secret"}, paramLabel = "KEY", description = "The host's DH-HMAC-CHAP key"
            + " (DHHC-1:XX:...:, as nvme gen-dhchap-key writes it). Visible to ps: prefer --dhchap-secret-file.")
    String dhchapSecret;

    @Option(names = {"-C", "--dhchap-ctrl-secret"}, paramLabel = "KEY", description = "The controller's DH-HMAC-CHAP"
            + " key: the controller must prove it holds it (bidirectional authentication). Visible to ps: prefer"
            + " --dhchap-ctrl-secret-file.")
    String dhchapCtrlSecret;

    @Option(names = "--dhchap-secret-file", paramLabel = "FILE", description = "Read the host's DH-HMAC-CHAP key from"
            + " FILE (which others must not be able to read).")
    Path dhchapSecretFile;

    @Option(names = "--dhchap-ctrl-secret-file", paramLabel = "FILE", description = "Read the controller's DH-HMAC-CHAP"
            + " key from FILE (which others must not be able to read).")
    Path dhchapCtrlSecretFile;

    @Option(names = "--dhchap-dhgroups", paramLabel = "LIST", split = ",", description = "DH groups to offer for"
            + " DH-HMAC-CHAP, e.g. ffdhe2048,ffdhe3072 (default: every ffdhe group; name null to offer the NULL group,"
            + " an exchange without Diffie-Hellman, too).")
    List<String> dhchapDhGroups;

    @Option(names = "--tls", description = "NVMe/TCP over TLS 1.3 with a PSK (give it with --tls-key-file).")
    boolean tls;

    @Option(names = "--tls-key", paramLabel = "KEY", description = "The configured TLS PSK (NVMeTLSkey-1:XX:...:, as nvme"
            + " gen-tls-key prints it); implies --tls. Visible to ps: prefer --tls-key-file.")
    String tlsKey;

    @Option(names = "--tls-key-file", paramLabel = "FILE", description = "Read the configured TLS PSK from FILE (which"
            + " others must not be able to read); implies --tls.")
    Path tlsKeyFile;

    @Option(names = "--tls-compat", description = "Derive the TLS PSK with libnvme's older HKDF labels, as the nvme-cli"
            + " of Debian 13 does when it puts keys in a Linux target's keyring (nvme-cli's --compat).")
    boolean tlsCompat;

    @Option(names = "--tls-identity-version", paramLabel = "N", description = "TLS PSK identity version: 0 (default,"
            + " NVMe0R0X <hostnqn> <subnqn>, as Linux 6.12 uses) or 1 (with a digest).")
    int tlsIdentityVersion;

    ConnectOptions toOptions() {
        if (connectTimeoutSeconds != null && connectTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--connect-timeout must be at least 1 second");
        }
        ConnectOptions o = ConnectOptions.defaults().ioQueues(ioQueues).queueSize(queueSize).registerUserBuffers(!bounceBuffers)
                .headerDigest(headerDigest).dataDigest(dataDigest).busyPoll(busyPoll == null ? BusyPoll.ADAPTIVE : BusyPoll.parse(busyPoll))
                .commandTimeout(Duration.ofSeconds(timeoutSeconds))
                .connectTimeout(Duration.ofSeconds(connectTimeoutSeconds != null ? connectTimeoutSeconds : Math.min(10, timeoutSeconds)))
                .controllerLossTimeout(Duration.ofSeconds(ctrlLossSeconds)).reconnectDelay(Duration.ofSeconds(reconnectDelaySeconds));
        if (ioEngine != null) {
            flag("--io-engine", () -> o.ioEngine(EventLoops.Engine.of(ioEngine)));
        }
        o.rdmaBusyPoll(rdmaBusyPoll);
        flag("--disni-cq-size", () -> o.disniCqSize(disniCqSize));
        flag("--disni-initiator-depth", () -> o.disniInitiatorDepth(disniInitiatorDepth));
        if (ioPolicy != null) {
            try {
                o.ioPolicy(Multipath.Policy.of(ioPolicy));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--iopolicy: " + e.getMessage());
            }
        }
        if (noPathSeconds != null) {
            if (noPathSeconds < 0) {
                throw new IllegalArgumentException("--no-path-tmo must not be negative");
            }
            o.noPathTimeout(Duration.ofSeconds(noPathSeconds));
        }
        o.dhchapSecret(key(dhchapSecret, dhchapSecretFile, "--dhchap-secret"));
        o.dhchapControllerSecret(key(dhchapCtrlSecret, dhchapCtrlSecretFile, "--dhchap-ctrl-secret"));
        if (dhchapDhGroups != null) {
            List<DhGroup> groups = new ArrayList<>();
            for (String name : dhchapDhGroups) {
                DhGroup g = DhGroup.named(name.trim());
                if (g == null) {
                    throw new IllegalArgumentException("--dhchap-dhgroups: '" + name + "' is not one of null, ffdhe2048,"
                            + " ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192");
                }
                groups.add(g);
            }
            o.dhchapDhGroups(groups);
        }
        if (o.dhchapControllerKey() != null && o.dhchapKey() == null) {
            throw new IllegalArgumentException("--dhchap-ctrl-secret needs --dhchap-secret too (the host authenticates first)");
        }
        if (tlsKey != null && tlsKeyFile != null) {
            throw new IllegalArgumentException("give --tls-key or --tls-key-file, not both");
        }
        String psk = tlsKeyFile != null ? KeyFiles.readPrivate(tlsKeyFile, "--tls-key-file") : tlsKey;
        if (psk != null) {
            try {
                o.tls(TlsPsk.parse(psk)).tlsDerivation(tlsCompat ? TlsPsk.Derivation.COMPAT : TlsPsk.Derivation.RFC8446)
                        .tlsIdentityVersion(tlsIdentityVersion);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException((tlsKeyFile != null ? "--tls-key-file " + tlsKeyFile : "--tls-key")
                        + ": " + e.getMessage());
            }
        } else if (tls) {
            throw new IllegalArgumentException("--tls needs the PSK: --tls-key-file FILE (there is no kernel keyring here)");
        }
        if (hostNqn != null) {
            o.identity(HostIdentity.of(hostNqn, hostId));
        } else if (hostId != null) {
            o.identity(new HostIdentity(HostIdentity.system().hostNqn(), hostId));
        }
        return o;
    }

    /** Runs {@code set}, naming {@code flag} in what it refuses. */
    private static void flag(String flag, Runnable set) {
        try {
            set.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    /** A key from the command line or from a private file; null if neither is given. */
    static DhchapKey key(String inline, Path file, String flag) {
        if (inline != null && file != null) {
            throw new IllegalArgumentException("give " + flag + " or " + flag + "-file, not both");
        }
        String text = inline;
        String from = flag;
        if (file != null) {
            from = flag + "-file " + file;
            text = KeyFiles.readPrivate(file, flag + "-file");
        }
        if (text == null) {
            return null;
        }
        try {
            return DhchapKey.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(from + ": " + e.getMessage());
        }
    }
}
