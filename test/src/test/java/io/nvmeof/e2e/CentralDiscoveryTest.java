package io.nvmeof.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.CentralDiscovery;
import io.nvmeof.target.Port;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A central discovery controller (TP8010) in process, met by our initiator as a registrant and
 * as a host: Discovery Information Management's register, update and deregister, what the
 * discovery log lists and when it says it changed, Identify's DCTYPE, expiry, and every refusal
 * with the status the specification gives it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CentralDiscoveryTest {
    static final String GATEWAY = "nqn.2026-12.io.nvmeof:gateway-a";
    static final String HOST = "nqn.2026-12.io.nvmeof:host-1";
    final List<AutoCloseable> open = new ArrayList<>();
    Target target;
    Port port;

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        if (target != null) {
            target.close();
        }
    }

    void start(Target.Options options) throws IOException {
        target = new Target(options);
        port = target.addPort(new Port(1, "tcp", new InetSocketAddress("127.0.0.1", 0), true, List.of()));
    }

    static Target.Options cdc() {
        return Target.Options.defaults().with(Settings.CDC, true);
    }

    Controller discovery(String hostNqn) throws IOException {
        Controller c = Nvmeof.connect("nvme+tcp://127.0.0.1:" + port.bound().getPort() + "/" + Nqn.DISCOVERY,
                ConnectOptions.defaults().identity(HostIdentity.of(hostNqn, UUID.nameUUIDFromBytes(hostNqn.getBytes())))
                        .keepAlive(Duration.ofSeconds(2)).controllerLossTimeout(Duration.ZERO));
        open.add(0, c);
        return c;
    }

    static DiscoveryInformation.Entry entry(String nqn, String traddr, int trsvcid) {
        return new DiscoveryInformation.Entry(DiscoveryLogEntry.TRTYPE_TCP, DiscoveryLogEntry.ADRFAM_IPV4,
                DiscoveryLogEntry.SUBTYPE_NVM, DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED, 1, 0xffff, 32,
                Integer.toString(trsvcid), nqn, traddr, null, null, "");
    }

    static DiscoveryInformation ddc(String eid, DiscoveryInformation.Entry... entries) {
        return new DiscoveryInformation(DiscoveryInformation.ETYPE_DDC, eid, "gateway-a", "nvmeof-java test", List.of(entries));
    }

    static List<String> subsystems(Controller c) throws IOException {
        List<String> out = new ArrayList<>();
        for (DiscoveryEntry e : Discovery.read(c).entries()) {
            if (e.subtype() == DiscoveryLogEntry.SUBTYPE_NVM) {
                out.add(e.subsystemNqn() + "@" + e.traddr() + ":" + e.trsvcid());
            }
        }
        return out;
    }

    static Status statusOf(ThrowingRunnable r) {
        NvmeStatusException e = assertThrows(NvmeStatusException.class, r::run);
        return e.status();
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void registersUpdatesAndDeregistersWithTheNoticeEachTime() throws Exception {
        start(cdc());
        Controller host = discovery(HOST);
        assertEquals(IdentifyController.DCTYPE_CDC, host.identify().dctype());
        AtomicInteger notices = new AtomicInteger();
        host.onEvent(e -> {
            if (e.logPage() == 0x70) {
                notices.incrementAndGet();
            }
        });
        assertEquals(List.of(), subsystems(host));
        Controller gw = discovery(GATEWAY);
        // an entry with no address is at the address the registrant came from (libnvme registers that way)
        Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "", 4420),
                entry("nqn.2026-12.io.nvmeof:vol2", "127.0.0.2", 4421)));
        await().atMost(Duration.ofSeconds(10)).until(() -> notices.get() >= 1);
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol1@127.0.0.1:4420", "nqn.2026-12.io.nvmeof:vol2@127.0.0.2:4421"),
                subsystems(host));
        List<CentralDiscovery.Registration> held = target.centralDiscovery().registrations();
        assertEquals(1, held.size());
        assertEquals(GATEWAY, held.get(0).registrant());
        assertEquals("ddc", held.get(0).entityType());
        assertTrue(held.get(0).connected());
        int before = notices.get();
        Discovery.manage(gw, DiscoveryInformation.TAS_UPDATE, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol2", "127.0.0.2", 4421)));
        await().atMost(Duration.ofSeconds(10)).until(() -> notices.get() > before);
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol2@127.0.0.2:4421"), subsystems(host));
        int again = notices.get();
        Discovery.manage(gw, DiscoveryInformation.TAS_DEREGISTER, ddc(GATEWAY));
        await().atMost(Duration.ofSeconds(10)).until(() -> notices.get() > again);
        assertEquals(List.of(), subsystems(host));
        assertEquals(List.of(), target.centralDiscovery().registrations());
    }

    @Test
    void aHostRegistrationIsKeptAndShownButListsNoSubsystem() throws Exception {
        start(cdc());
        Controller h = discovery(HOST);
        DiscoveryInformation.Entry me = new DiscoveryInformation.Entry(DiscoveryLogEntry.TRTYPE_TCP,
                DiscoveryLogEntry.ADRFAM_IPV4, 0, 0, 0, 0, 0, "", HOST, "", null, new byte[16], "rack 4 host");
        Discovery.manage(h, DiscoveryInformation.TAS_REGISTER, new DiscoveryInformation(DiscoveryInformation.ETYPE_HOST, HOST,
                "host-1", "Linux", List.of(me)));
        CentralDiscovery.Registration r = target.centralDiscovery().registrations().get(0);
        assertEquals("host", r.entityType());
        assertEquals("127.0.0.1", r.entries().get(0).traddr());
        assertEquals("rack 4 host", r.entries().get(0).symbolicName());
        assertEquals(List.of(), subsystems(h));
        // a host registers itself only
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> Discovery.manage(h, DiscoveryInformation.TAS_REGISTER,
                new DiscoveryInformation(DiscoveryInformation.ETYPE_HOST, "nqn.2026-12.io.nvmeof:someone-else", "x", "y",
                        List.of(me)))));
    }

    @Test
    void badRegistrationsAreRefusedWithTheSpecsStatusAndHarmNothing() throws Exception {
        start(cdc().with(Settings.MAX_CDC_REGISTRATIONS_PER_HOST, 3).with(Settings.MAX_CDC_REGISTRATIONS, 4));
        Controller gw = discovery(GATEWAY);
        Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:kept", "10.0.0.1", 4420)));
        // an update of what was never registered
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> Discovery.manage(gw, DiscoveryInformation.TAS_UPDATE,
                ddc("nqn.2026-12.io.nvmeof:never"))));
        // more than one registrant may hold
        assertEquals(Status.INSUFFICIENT_DISCOVERY_RESOURCES, statusOf(() -> Discovery.manage(gw,
                DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:second", entry("nqn.2026-12.io.nvmeof:a", "10.0.0.1",
                        1), entry("nqn.2026-12.io.nvmeof:b", "10.0.0.1", 2), entry("nqn.2026-12.io.nvmeof:c", "10.0.0.1", 3)))));
        // more than the target holds in all, from another registrant
        Controller other = discovery("nqn.2026-12.io.nvmeof:gateway-b");
        Discovery.manage(other, DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:gateway-b",
                entry("nqn.2026-12.io.nvmeof:b1", "10.0.0.2", 1), entry("nqn.2026-12.io.nvmeof:b2", "10.0.0.2", 2),
                entry("nqn.2026-12.io.nvmeof:b3", "10.0.0.2", 3)));
        assertEquals(Status.INSUFFICIENT_DISCOVERY_RESOURCES, statusOf(() -> Discovery.manage(gw,
                DiscoveryInformation.TAS_UPDATE, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:kept", "10.0.0.1", 4420),
                        entry("nqn.2026-12.io.nvmeof:more", "10.0.0.1", 4421)))));
        // an entry no host could use: an unknown transport
        DiscoveryInformation.Entry fc = new DiscoveryInformation.Entry(DiscoveryLogEntry.TRTYPE_FC, 1, 2, 0, 1, 0, 32, "1",
                "nqn.2026-12.io.nvmeof:fc", "x", null, null, "");
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> Discovery.manage(gw, DiscoveryInformation.TAS_UPDATE,
                ddc(GATEWAY, fc))));
        // malformed data: TDL that is not the data's length, a TEL past the end, a control byte in EID
        ByteBuffer good = ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:kept", "10.0.0.1", 4420)).encode();
        ByteBuffer tdl = copy(good);
        tdl.putInt(DiscoveryInformation.TDL_OFFSET, good.capacity() + 4);
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> raw(gw, 2, tdl)));
        ByteBuffer tel = copy(good);
        tel.putInt(DiscoveryInformation.HEADER_SIZE + DiscoveryInformation.TEL_OFFSET, 1 << 20);
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> raw(gw, 2, tel)));
        ByteBuffer eid = copy(good);
        eid.put(DiscoveryInformation.EID_OFFSET + 5, (byte) 7);
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> raw(gw, 2, eid)));
        ByteBuffer nument = copy(good);
        nument.putLong(DiscoveryInformation.NUMENT_OFFSET, Long.MAX_VALUE);
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> raw(gw, 0, nument)));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> raw(gw, 3, copy(good))));
        // and what was registered is still there, unchanged
        Controller host = discovery(HOST);
        assertEquals(List.of("nqn.2026-12.io.nvmeof:kept@10.0.0.1:4420", "nqn.2026-12.io.nvmeof:b1@10.0.0.2:1",
                "nqn.2026-12.io.nvmeof:b2@10.0.0.2:2", "nqn.2026-12.io.nvmeof:b3@10.0.0.2:3"), subsystems(host));
    }

    @Test
    void noRegistrantTouchesAnothersAndEmptyRegistrationsCountAgainstTheCaps() throws Exception {
        start(cdc().with(Settings.MAX_CDC_REGISTRATIONS_PER_HOST, 3).with(Settings.MAX_CDC_REGISTRATIONS, 5));
        Controller gw = discovery(GATEWAY);
        Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)));
        // another registrant naming the same entity: its deregister finds nothing of its own, its update is refused
        Controller b = discovery("nqn.2026-12.io.nvmeof:gateway-b");
        Discovery.manage(b, DiscoveryInformation.TAS_DEREGISTER, ddc(GATEWAY));
        assertEquals(Status.INVALID_DISCOVERY_INFO, statusOf(() -> Discovery.manage(b, DiscoveryInformation.TAS_UPDATE,
                ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:rogue", "10.9.9.9", 4420)))));
        Controller host = discovery(HOST);
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol1@10.0.0.1:4420"), subsystems(host));
        // a registration of no entries is one against the caps: a flood of new EIDs stops at the registrant's
        Discovery.manage(b, DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:empty-0"));
        Discovery.manage(b, DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:empty-1"));
        Discovery.manage(b, DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:empty-2"));
        assertEquals(Status.INSUFFICIENT_DISCOVERY_RESOURCES, statusOf(() -> Discovery.manage(b,
                DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:empty-3"))));
        // and at the target's, host registrations too (5 in all: 1 + 3 held, this one the last)
        DiscoveryInformation.Entry me = new DiscoveryInformation.Entry(DiscoveryLogEntry.TRTYPE_TCP,
                DiscoveryLogEntry.ADRFAM_IPV4, 0, 0, 0, 0, 0, "", HOST, "", null, null, "");
        Discovery.manage(host, DiscoveryInformation.TAS_REGISTER, new DiscoveryInformation(DiscoveryInformation.ETYPE_HOST,
                HOST, "", "", List.of()));
        Controller c = discovery("nqn.2026-12.io.nvmeof:host-2");
        assertEquals(Status.INSUFFICIENT_DISCOVERY_RESOURCES, statusOf(() -> Discovery.manage(c,
                DiscoveryInformation.TAS_REGISTER, new DiscoveryInformation(DiscoveryInformation.ETYPE_HOST,
                        "nqn.2026-12.io.nvmeof:host-2", "", "", List.of(me)))));
        assertEquals(5, target.centralDiscovery().registrations().size());
        // more data than the most entries one registrant may hold: refused before it moves
        ByteBuffer big = Flyweight.allocate(DiscoveryInformation.HEADER_SIZE + 4 * 2048);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID.withDnr(false), statusOf(() -> raw(c, 0, big)).withDnr(false));
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol1@10.0.0.1:4420"), subsystems(host));
    }

    @Test
    void onlyTheListedRegistrantsMayRegisterAndADirectControllerTakesNone() throws Exception {
        start(cdc().with(Settings.CDC_REGISTRANTS, "nqn.2026-12.io.nvmeof:gateway-b"));
        Controller gw = discovery(GATEWAY);
        assertEquals(Status.ACCESS_DENIED, statusOf(() -> Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER,
                ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)))));
        Controller b = discovery("nqn.2026-12.io.nvmeof:gateway-b");
        Discovery.manage(b, DiscoveryInformation.TAS_REGISTER, ddc("nqn.2026-12.io.nvmeof:gateway-b",
                entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)));
        assertEquals(1, target.centralDiscovery().registrations().size());
        target.close();
        target = null;
        open.clear();
        start(Target.Options.defaults());
        Controller plain = discovery(GATEWAY);
        assertEquals(IdentifyController.DCTYPE_NOT_REPORTED, plain.identify().dctype());
        assertEquals(Status.INVALID_OPCODE, statusOf(() -> Discovery.manage(plain, DiscoveryInformation.TAS_REGISTER,
                ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)))));
    }

    @Test
    void aRegistrantWithAKeyProvesItselfToTheCdc() throws Exception {
        start(cdc());
        java.security.SecureRandom random = new java.security.SecureRandom();
        io.nvmeof.protocol.auth.DhchapKey key = io.nvmeof.protocol.auth.DhchapKey.create(
                io.nvmeof.protocol.auth.DhchapKey.randomSecret(32, random), null, GATEWAY);
        target.hostSecurity(List.of(new io.nvmeof.target.HostSecurity(GATEWAY, key, null)));
        String uri = "nvme+tcp://127.0.0.1:" + port.bound().getPort() + "/" + Nqn.DISCOVERY;
        ConnectOptions as = ConnectOptions.defaults().identity(HostIdentity.of(GATEWAY, UUID.nameUUIDFromBytes(GATEWAY.getBytes())))
                .controllerLossTimeout(Duration.ZERO);
        // without its key it is not let in, so it cannot register
        assertThrows(IOException.class, () -> Nvmeof.connect(uri, as).close());
        // with it, it authenticates (DH-HMAC-CHAP) and registers
        try (Controller gw = Nvmeof.connect(uri, as.dhchapSecret(key))) {
            Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)));
        }
        assertEquals(1, target.centralDiscovery().registrations().size());
        // a host without a key still reads the log without authenticating
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol1@10.0.0.1:4420"), subsystems(discovery(HOST)));
    }

    @Test
    void aOneShotRegistrationOutlivesItsControllerByTheTtl() throws Exception {
        // a ttl long enough for the checks between the close and the expiry on a busy machine
        start(cdc().with(Settings.CDC_REGISTRATION_TTL, 10));
        Controller host = discovery(HOST);
        AtomicInteger notices = new AtomicInteger();
        host.onEvent(e -> notices.incrementAndGet());
        Controller gw = discovery(GATEWAY);
        long registered = System.nanoTime(); // before the target's clock for it starts
        Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1", 4420)));
        gw.close(); // a clean shutdown, as nvme-cli's dim ends
        open.remove(gw);
        await().atMost(Duration.ofSeconds(10)).until(() -> !target.centralDiscovery().registrations().get(0).connected());
        assertEquals(List.of("nqn.2026-12.io.nvmeof:vol1@10.0.0.1:4420"), subsystems(host));
        int before = notices.get();
        await().atMost(Duration.ofSeconds(30)).until(() -> target.centralDiscovery().registrations().isEmpty());
        assertTrue(System.nanoTime() - registered >= TimeUnit.SECONDS.toNanos(10), "expired before its TTL");
        await().atMost(Duration.ofSeconds(10)).until(() -> notices.get() > before);
        assertEquals(List.of(), subsystems(host));
    }

    @Test
    void aLostRegistrantKeepsItsEntriesForItsKeepAliveButNeverPastTheTtl() throws Exception {
        start(cdc().with(Settings.CDC_REGISTRATION_TTL, 5));
        try (MultipathGatewaysTest.Proxy proxy = new MultipathGatewaysTest.Proxy(port.bound().getPort())) {
            // a registrant that asks for an hour's keep-alive timeout, through a link that can be lost
            Controller gw = Nvmeof.connect("nvme+tcp://127.0.0.1:" + proxy.port() + "/" + Nqn.DISCOVERY,
                    ConnectOptions.defaults().identity(HostIdentity.of(GATEWAY, UUID.nameUUIDFromBytes(GATEWAY.getBytes())))
                            .persistentDiscovery(true).keepAlive(Duration.ofHours(1)).controllerLossTimeout(Duration.ZERO));
            open.add(0, gw);
            Discovery.manage(gw, DiscoveryInformation.TAS_REGISTER, ddc(GATEWAY, entry("nqn.2026-12.io.nvmeof:vol1", "10.0.0.1",
                    4420)));
            proxy.close(); // the connection is lost, no shutdown: the CDC's controller goes at once
            long lost = System.nanoTime();
            await().atMost(Duration.ofSeconds(10)).until(() -> !target.centralDiscovery().registrations().get(0).connected());
            // kept through the grace (the ttl here, not the hour asked for), then gone
            await().atMost(Duration.ofSeconds(30)).until(() -> target.centralDiscovery().registrations().isEmpty());
            assertTrue(System.nanoTime() - lost >= TimeUnit.SECONDS.toNanos(4), "gone before its grace");
        }
    }

    static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = Flyweight.allocate(b.capacity());
        c.put(0, b, 0, b.capacity());
        return c;
    }

    static void raw(Controller c, int tas, ByteBuffer data) throws IOException {
        c.admin(Command.admin(AdminOpcode.DISCOVERY_INFO_MGMT, "DIM").cdw(10, tas).dataOut(data, data.capacity()));
    }
}
