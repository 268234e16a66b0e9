package io.nvmeof.daemon.config;

import io.nvmeof.target.Settings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.Target;
import io.nvmeof.target.RawHost;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Changes while running: namespaces and allowed hosts come and go by a config reload while a
 * host stays connected, and the host gets its namespace-attribute-changed notice.
 */
class ReloadTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:reload";

    static String config(String namespaces, String hosts) {
        return "{\"ports\": [{\"portid\": 1, \"traddr\": \"127.0.0.1\", \"trsvcid\": 0, \"subsystems\": [\"" + NQN + "\"]}],"
                + " \"subsystems\": [{\"nqn\": \"" + NQN + "\", " + hosts + " \"namespaces\": [" + namespaces + "]}]}";
    }

    static final String NS1 = "{\"nsid\": 1, \"backend\": \"ram\", \"size\": \"1M\"}";
    static final String NS2 = "{\"nsid\": 2, \"backend\": \"ram\", \"size\": \"2M\"}";

    private static int[] readChangedList(RawHost h) throws Exception {
        h.send(h.capsule(s -> {
            s.opcode(AdminOpcode.GET_LOG_PAGE.code).psdt(1).sgl(0, 4096, Sgl.TCP_TRANSPORT);
            LogPage.request(s, LogPage.CHANGED_NAMESPACE_LIST, 0, 4096, false);
        }, null));
        RawHost.Received data = h.receive();
        assertEquals(PduType.C2H_DATA, data.type());
        int pdo = data.u8(Pdu.PDO_OFFSET);
        int n = 0;
        while (data.bytes().getInt(pdo + 4 * n) != 0) {
            n++;
        }
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = data.bytes().getInt(pdo + 4 * i);
        }
        assertTrue(h.receive().cqe().status().isSuccess());
        return ids;
    }

    /** Connects {@code admin} and {@code io} to one controller, with namespace attribute notices on. */
    private static void connectWithNotices(RawHost admin, RawHost io) throws Exception {
        int cntlid = admin.bringUpAdmin(NQN);
        io.bringUpIo(NQN, 1, cntlid);
        assertTrue(admin.command(s -> s.opcode(AdminOpcode.SET_FEATURES.code).psdt(1)
                .featureId(FeatureId.ASYNC_EVENT_CONFIG).cdw(11, 1 << 8), null).cqe().status().isSuccess());
    }

    private static Status read(RawHost io, int nsid) throws Exception {
        return read(io, nsid, 0);
    }

    /** A read of block {@code lba} of namespace {@code nsid}: its status. */
    private static Status read(RawHost io, int nsid, long lba) throws Exception {
        io.send(io.capsule(s -> s.opcode(NvmOpcode.READ.code).psdt(1).nsid(nsid).slba(lba).blockCount(1)
                .sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
        RawHost.Received r = io.receive();
        if (r.type() == PduType.C2H_DATA) {
            r = io.receive();
        }
        return r.cqe().status();
    }

    @Test
    void namespacesAndHostsChangeUnderAConnectedHost() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            InetSocketAddress address = target.ports().get(0).bound();
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                connectWithNotices(admin, io);
                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1).cid(900), null));
                assertTrue(read(io, 1).isSuccess());
                assertEquals(Status.INVALID_NAMESPACE, read(io, 2).withDnr(true));

                // add namespace 2
                ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(config(NS1 + "," + NS2, "")));
                assertTrue(c.toString().contains("namespace 2 added"), c.toString());
                CompletionQueueEntry aen = admin.receive().cqe();
                assertEquals(900, aen.cid());
                assertEquals(0x040002, aen.dw0(), "notice, namespace attribute changed, log page 04h");
                assertEquals(2, readChangedList(admin)[0]);
                assertTrue(read(io, 2).isSuccess(), "the new namespace serves on the existing connection");

                // remove namespace 1: the next AER reports it
                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1).cid(901), null));
                applier.apply(ConfigLoader.parse(config(NS2, "")));
                assertEquals(0x040002, admin.receive().cqe().dw0());
                assertEquals(1, readChangedList(admin)[0]);
                assertEquals(Status.INVALID_NAMESPACE, read(io, 1).withDnr(true));
                assertTrue(read(io, 2).isSuccess());

                // active namespace list follows
                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.IDENTIFY.code).psdt(1)
                        .identifyCns(IdentifyCns.ACTIVE_NAMESPACE_LIST).sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
                RawHost.Received list = admin.receive();
                ByteBuffer b = list.bytes();
                int pdo = list.u8(Pdu.PDO_OFFSET);
                assertEquals(2, b.getInt(pdo));
                assertEquals(0, b.getInt(pdo + 4));
                admin.receive();

                // only another host is allowed from now on: this host's controller goes at once
                // (its admin and I/O connections close), and it cannot come back
                applier.apply(ConfigLoader.parse(config(NS2, "\"allowed_hosts\": [\"nqn.2026-11.io.nvmeof:other\"],")));
                assertTrue(admin.closedByPeer(), "the revoked host's admin queue is closed");
                assertTrue(io.closedByPeer(), "and its I/O queue");
                try (RawHost late = new RawHost(address)) {
                    late.icreq();
                    assertEquals(Status.CONNECT_INVALID_HOST, late.connect(0, NQN, RawHost.HOST_NQN, 0xffff).cqe().status());
                }
            }
        }
    }

    /**
     * A namespace's {@code enable} (one schema row, applied where the reload opens and removes
     * namespaces): turned off, the namespace is closed and a connected host gets the notice and
     * Invalid Namespace, while it stays in the written configuration; turned on, it serves again
     * on the same connection. nvmetcli's 0 and 1 are taken too.
     */
    @Test
    void aNamespaceIsDisabledAndEnabledByReload() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1 + "," + NS2, "")));
            InetSocketAddress address = target.ports().get(0).bound();
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                connectWithNotices(admin, io);
                assertTrue(read(io, 2).isSuccess());

                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1).cid(900), null));
                TargetConfig off = ConfigLoader.parse(config(NS1 + "," + NS2.replace("}", ", \"enable\": false}"), ""));
                ConfigApplier.Changes c = applier.apply(off);
                assertTrue(c.toString().contains("namespace 2 disabled"), c.toString());
                assertEquals(0x040002, admin.receive().cqe().dw0(), "notice, namespace attribute changed");
                assertEquals(2, readChangedList(admin)[0]);
                assertEquals(Status.INVALID_NAMESPACE, read(io, 2).withDnr(true));
                assertTrue(read(io, 1).isSuccess(), "the other namespace serves on");
                String written = ConfigWriter.write(off, ConfigWriter.Secrets.WRITTEN);
                assertTrue(written.contains("\"enable\" : false"), "kept in the configuration, disabled: " + written);
                assertEquals(off.subsystems(), ConfigLoader.parse(written).subsystems());

                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1).cid(901), null));
                c = applier.apply(ConfigLoader.parse(config(NS1 + "," + NS2.replace("}", ", \"enable\": 1}"), "")));
                assertTrue(c.toString().contains("namespace 2 added"), c.toString());
                assertEquals(0x040002, admin.receive().cqe().dw0());
                assertTrue(read(io, 2).isSuccess(), "enabled again, on the same connection");
            }
            ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class,
                    () -> ConfigLoader.parse(config(NS1.replace("}", ", \"enable\": \"yes\"}"), "")));
            assertEquals("subsystems[0].namespaces[0].enable", e.field());
        }
    }

    /** A reload changes the limits of a running target: the buffer budget at once, the rest from then on. */
    @Test
    void limitsChangeByReload() throws Exception {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.MAX_BUFFER_MEMORY, (long) (8 << 20));
        try (Target target = new Target(o)) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            assertEquals(8 << 20, target.bufferBudget().limit(), "a config without limits keeps the target's own");
            String limited = config(NS1, "").replaceFirst("\\{", "{\"limits\": {\"max_buffer_memory\": \"32M\", "
                    + "\"data_timeout_ms\": 4000},");
            ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(limited));
            assertTrue(c.toString().contains("max_buffer_memory now 33554432"), c.toString());
            assertEquals(32 << 20, target.bufferBudget().limit());
            assertEquals(4000L, target.options().get(Settings.DATA_TIMEOUT_MS));
            // taken out again: the defaults
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            assertEquals(Target.defaultMaxBufferMemory(), target.bufferBudget().limit());
            assertEquals(Settings.DATA_TIMEOUT_MS.defaultValue(), target.options().get(Settings.DATA_TIMEOUT_MS));
        }
    }

    /** A reload that changes a setting that does not reload says so and keeps the value the target started with. */
    @Test
    void aSettingThatDoesNotReloadKeepsItsValueAndIsNamed() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            String changed = config(NS1, "").replaceFirst("\\{", "{\"settings\": {\"max_queue_size\": 256, "
                    + "\"max_connections\": 77},");
            ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(changed));
            assertTrue(c.toString().contains("max_queue_size changes only at a restart: kept 128"), c.toString());
            assertTrue(c.toString().contains("max_connections now 77"), c.toString());
            assertEquals(128, (int) target.options().get(Settings.MAX_QUEUE_SIZE));
            assertEquals(77, target.options().get(Settings.MAX_CONNECTIONS));
        }
    }

    @Test
    void anaStatesAndGroupsChangeByReload() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(ConfigLoaderTest.ANA));
            io.nvmeof.target.Port port = target.ports().get(0);
            assertEquals(io.nvmeof.target.AnaState.NON_OPTIMIZED, port.anaState(1));
            assertEquals(io.nvmeof.target.AnaState.OPTIMIZED, port.anaState(5));
            assertEquals(5, target.subsystem("nqn.2026-11.io.nvmeof:a").namespace(2).anaGroup());
            int bound = port.bound().getPort();

            ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(ConfigLoaderTest.ANA
                    .replace("\"state\": \"optimized\"", "\"state\": \"inaccessible\"")
                    .replace("{\"grpid\": 1, \"ana\": {\"state\": \"non-optimized\"}}, ", "")
                    .replace("\"ana_grpid\": 5", "\"ana_grpid\": 7")));
            assertSame(port, target.ports().get(0), "the port was kept open");
            assertEquals(bound, port.bound().getPort());
            assertEquals(io.nvmeof.target.AnaState.INACCESSIBLE, port.anaState(5));
            assertEquals(io.nvmeof.target.AnaState.OPTIMIZED, port.anaState(1), "group 1 went back to its default");
            assertEquals(7, target.subsystem("nqn.2026-11.io.nvmeof:a").namespace(2).anaGroup());
            assertTrue(c.toString().contains("port 1 ANA groups ") && c.toString().contains("5 inaccessible"), c.toString());
            assertTrue(c.toString().contains("now in ANA group 7"), c.toString());
        }
    }

    /**
     * A subsystem's and a port's in-place rows, each applied by its row's setter on the running
     * object: a new controller ID range is used by the next controller while a connected host stays;
     * a port's referrals change; a subsystem taken off the port lets its hosts there go, and comes
     * back with the port still open.
     */
    @Test
    void aSubsystemsAndAPortsRowsApplyInPlace() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            io.nvmeof.target.Port port = target.ports().get(0);
            InetSocketAddress address = port.bound();
            try (RawHost first = new RawHost(address)) {
                assertTrue(first.bringUpAdmin(NQN) < 100);
                ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(config(NS1, "\"cntlid_min\": 100,"
                        + " \"cntlid_max\": 200,").replace("\"subsystems\": [\"" + NQN + "\"]}]", "\"subsystems\": [\""
                        + NQN + "\"], \"referrals\": [{\"trtype\": \"tcp\", \"traddr\": \"127.0.0.2\"}]}]")));
                assertEquals(java.util.List.of(NQN + ": controller IDs 100..200",
                        "port 1 referrals [referral1=tcp://127.0.0.2:8009]"), c.lines());
                assertSame(port, target.ports().get(0), "the port was kept open");
                try (RawHost second = new RawHost(address)) {
                    int cntlid = second.bringUpAdmin(NQN);
                    assertTrue(cntlid >= 100 && cntlid <= 200, "the new range: " + cntlid);
                }
                Status kept = first.command(s -> s.opcode(AdminOpcode.KEEP_ALIVE.code).psdt(1), null).cqe().status();
                assertTrue(kept.isSuccess(), "the connected host stays: " + kept);
                c = applier.apply(ConfigLoader.parse(config(NS1, "").replace("\"subsystems\": [\"" + NQN + "\"]",
                        "\"subsystems\": []")));
                assertEquals(java.util.List.of(NQN + ": controller IDs 1..65519", "port 1 now serves []",
                        "port 1 referrals []"), c.lines());
                assertTrue(first.closedByPeer(), "a subsystem taken off the port lets its hosts there go");
                c = applier.apply(ConfigLoader.parse(config(NS1, "")));
                assertEquals(java.util.List.of("port 1 now serves [" + NQN + "]"), c.lines());
                try (RawHost again = new RawHost(address)) {
                    assertTrue(again.bringUpAdmin(NQN) > 0, "served there again");
                }
            }
        }
    }

    /**
     * A reload that replaces a namespace's storage (here RAM by null) keeps its reservation: the
     * reservation belongs to the subsystem, NSID and NGUID, not to the object. A namespace of
     * another identity under the same NSID starts with none.
     */
    @Test
    void aReloadThatReplacesANamespaceKeepsItsReservation() throws Exception {
        String uuid = "\"uuid\": \"8d2f4c1a-3b5e-4f60-9a7b-1c2d3e4f5a6b\"";
        java.util.UUID host = java.util.UUID.fromString("0c0c0c0c-0000-4000-8000-00000000000c");
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config("{\"nsid\": 1, \"backend\": \"ram\", \"size\": \"1M\", " + uuid + "}", "")));
            io.nvmeof.target.Namespace before = target.subsystem(NQN).namespace(1);
            assertEquals(Status.SUCCESS, before.reservations().register(host, "nqn.2026-11.io.nvmeof:h", 0, false, 0, 0, 7).status());
            assertEquals(Status.SUCCESS, before.reservations().acquire(host, "nqn.2026-11.io.nvmeof:h", 0, false, 1, 7, 0).status());

            // other storage under the same identity (a RAM namespace becomes a null one): a new Namespace object
            applier.apply(ConfigLoader.parse(config("{\"nsid\": 1, \"backend\": \"null\", \"size\": \"2M\", " + uuid + "}", "")));
            io.nvmeof.target.Namespace after = target.subsystem(NQN).namespace(1);
            assertTrue(after != before, "the reload replaced the namespace");
            assertEquals(1, after.reservations().state().type(), "its reservation stays");
            assertEquals(7, after.reservations().state().registrant(host).key());

            applier.apply(ConfigLoader.parse(config("{\"nsid\": 1, \"backend\": \"null\", \"size\": \"2M\", "
                    + "\"uuid\": \"9e3a5d2b-4c6f-4071-8b8c-2d3e4f5a6b7c\"}", "")));
            assertEquals(0, target.subsystem(NQN).namespace(1).reservations().state().registrants().size(),
                    "another namespace (another NGUID) under NSID 1 has no reservation");
        }
    }

    /**
     * A reload with a new size resizes the namespace in place: the same object (no gap, no Invalid
     * Namespace), the host's namespace attribute notice, the new size in Identify and for I/O. A
     * smaller size is refused unless the namespace says allow_shrink.
     */
    @Test
    void aNewSizeResizesInPlaceAndShrinkingNeedsItsFlag() throws Exception {
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(NS1, "")));
            io.nvmeof.target.Namespace before = target.subsystem(NQN).namespace(1);
            InetSocketAddress address = target.ports().get(0).bound();
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
                assertTrue(admin.command(s -> s.opcode(AdminOpcode.SET_FEATURES.code).psdt(1)
                        .featureId(FeatureId.ASYNC_EVENT_CONFIG).cdw(11, 1 << 8), null).cqe().status().isSuccess());
                admin.send(admin.capsule(s -> s.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code).psdt(1).cid(900), null));
                assertEquals(Status.LBA_OUT_OF_RANGE, read(io, 1, 256).withDnr(true), "1 MiB: 256 blocks");

                ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(config(NS1.replace("1M", "2M"), "")));
                assertTrue(c.toString().contains("namespace 1 resized in place from 1048576 to 2097152 bytes"), c.toString());
                assertSame(before, target.subsystem(NQN).namespace(1), "resized, not replaced");
                assertEquals(0x040002, admin.receive().cqe().dw0(), "the namespace attribute notice");
                assertEquals(1, readChangedList(admin)[0]);
                assertTrue(read(io, 1, 511).isSuccess(), "the new blocks serve at once");

                c = applier.apply(ConfigLoader.parse(config(NS1, "")));
                assertTrue(c.failures().toString().contains("allow_shrink"), c.toString());
                assertEquals(2 << 20, before.backend().size(), "not shrunk without the flag");
                c = applier.apply(ConfigLoader.parse(config(NS1.replace("}", ", \"allow_shrink\": true}"), "")));
                assertTrue(c.toString().contains("resized in place from 2097152 to 1048576"), c.toString());
                assertEquals(Status.LBA_OUT_OF_RANGE, read(io, 1, 256).withDnr(true));
            }
        }
    }

    /** A file namespace that takes the file's size grows when the file grew outside, at the next reload. */
    @Test
    void aFileThatGrewIsFoundAtTheNextReload(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path f = dir.resolve("ns.img");
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(1 << 20);
        }
        String ns = "{\"nsid\": 1, \"backend\": \"file\", \"path\": \"" + f + "\"}";
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.parse(config(ns, "")));
            try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
                raf.setLength(3 << 20);
            }
            ConfigApplier.Changes c = applier.apply(ConfigLoader.parse(config(ns, "")));
            assertTrue(c.toString().contains("resized in place from 1048576 to 3145728 bytes"), c.toString());
            assertEquals(3 << 20, target.subsystem(NQN).namespace(1).backend().size());
        }
    }
}
