package io.nvmeof.daemon;

import io.nvmeof.fabric.Failures;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.target.Port;
import io.nvmeof.target.ProductVersion;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Registers this target with a central discovery controller ({@code cdc_address}) as a direct
 * discovery controller (TP8010, ETYPE 2): a discovery connection to the CDC with keep-alive,
 * held open, over which it registers an entry per subsystem per port; an update whenever those
 * change and every {@link #REFRESH} besides (so a registration outlives no restart of the CDC
 * unnoticed); on a lost connection, a new one and a new registration, retried with a growing
 * delay up to {@link #RETRY_MAX}; a deregistration at shutdown. The daemon's one use of the
 * initiator. Runs on a thread of its own; never on the target's event loops.
 *
 * <p>The entity is this target: its EID is a UUID NQN derived from the host NQN and the ports
 * it listened on at its first registration, so that two targets on one machine (one host NQN,
 * the registrant) keep two registrations.
 */
final class CdcRegistrar extends BackgroundWork {
    static final Duration KEEP_ALIVE = Duration.ofSeconds(5);
    static final Duration REFRESH = Duration.ofSeconds(10);
    static final Duration RETRY_MAX = Duration.ofSeconds(30);
    private static final long TICK_MILLIS = 1000;

    private final Target target;
    private final String address;
    private final HostIdentity identity = HostIdentity.system();
    /** Only the registrar's thread touches these. */
    private Controller cdc;
    private DiscoveryInformation sent;
    private long sentAt;
    private long nextAttempt;
    private long retry = TICK_MILLIS;
    private String lastFailure;
    /** The entity this target registers as, fixed by its ports at the first registration. */
    private String entityId;
    /** This machine's name (ENAME), looked up once. */
    private String entityName;

    CdcRegistrar(Target target, String address, PrintWriter out) {
        super("cdc-registrar", out);
        this.target = target;
        this.address = address.endsWith("/") ? address.substring(0, address.length() - 1) : address;
        every(TICK_MILLIS, this::tick);
    }

    /** The registration as it stands now. */
    DiscoveryInformation registration() {
        if (entityId == null) {
            String name = localHostName();
            entityName = name.length() > DiscoveryInformation.ENAME_LENGTH || !name.matches("[\\x20-\\x7e]*") ? "" : name;
            TreeSet<String> ports = new TreeSet<>();
            for (Port p : target.ports()) {
                ports.add(p.trtype() + "://" + p.bound().getAddress().getHostAddress() + ":" + p.bound().getPort());
            }
            entityId = Nqn.fromUuid(UUID.nameUUIDFromBytes((identity.hostNqn() + " " + ports).getBytes(StandardCharsets.UTF_8)));
        }
        return new DiscoveryInformation(DiscoveryInformation.ETYPE_DDC, entityId, entityName,
                "nvmeof-java " + ProductVersion.FIRMWARE_REVISION, target.centralDiscovery().ownEntries());
    }

    private void tick() {
        long now = System.nanoTime();
        if (cdc == null && now - nextAttempt < 0) {
            return;
        }
        DiscoveryInformation want = registration();
        boolean due = sent == null || !want.equals(sent) || now - sentAt > REFRESH.toNanos();
        if (!due) {
            return;
        }
        try {
            if (cdc == null) {
                cdc = Nvmeof.connect(address + "/" + Nqn.DISCOVERY, ConnectOptions.defaults().identity(identity)
                        .keepAlive(KEEP_ALIVE).persistentDiscovery(true).controllerLossTimeout(Duration.ZERO).connectTimeout(Duration.ofSeconds(5))
                        .commandTimeout(Duration.ofSeconds(5))); // a stuck CDC holds no tick past close()'s wait
                sent = null;
            }
            int tas = sent == null ? DiscoveryInformation.TAS_REGISTER : DiscoveryInformation.TAS_UPDATE;
            Discovery.manage(cdc, tas, want);
            if (sent == null || !want.entries().equals(sent.entries())) {
                say("nvmeof target: registered " + want.entries().size() + " entr" + (want.entries().size() == 1 ? "y" : "ies")
                        + " with the central discovery controller at " + address + " as " + want.entityId() + " (host "
                        + identity.hostNqn() + ")");
            }
            sent = want;
            sentAt = now;
            retry = TICK_MILLIS;
            lastFailure = null;
        } catch (IOException | RuntimeException e) {
            String why = Failures.describe(e);
            if (!why.equals(lastFailure)) {
                say("nvmeof target: cannot register with the central discovery controller at " + address + ": " + why
                        + "; trying again");
                lastFailure = why;
            }
            drop();
            nextAttempt = now + TimeUnit.MILLISECONDS.toNanos(retry);
            retry = Math.min(retry * 2, RETRY_MAX.toMillis());
        }
    }

    private void drop() {
        if (cdc != null) {
            cdc.close();
            cdc = null;
        }
        sent = null;
    }

    /** Withdraws the registration and ends the connection. */
    @Override
    void finish() {
        if (cdc != null && sent != null) {
            try {
                Discovery.manage(cdc, DiscoveryInformation.TAS_DEREGISTER, new DiscoveryInformation(
                        sent.entityType(), sent.entityId(), sent.entityName(), sent.entityVersion(), List.of()));
                say("nvmeof target: deregistered from the central discovery controller at " + address);
            } catch (IOException | RuntimeException e) {
                say("nvmeof target: could not deregister from the central discovery controller at " + address + ": "
                        + Failures.describe(e));
            }
        }
        drop();
    }

    /** {@link #finish}, for at most 10 s. */
    @Override
    public void close() {
        close(10);
    }
}
