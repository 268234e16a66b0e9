package io.nvmeof.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Target;
import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Namespaces visible to some of a subsystem's hosts only (SPDK's {@code --no-auto-visible} with
 * {@code nvmf_ns_add_host}), set in the JSON config and changed by reload: a host's active
 * namespace list, Identify Namespace and I/O show it only its own, and a reload that changes
 * what a connected host sees sends it the namespace-changed notice.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NamespaceVisibilityTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:visibility";
    static final String A = "nqn.2026-11.io.nvmeof:host-a";
    static final String B = "nqn.2026-11.io.nvmeof:host-b";
    Target target;
    ConfigApplier applier;
    int port;

    static String config(String ns2, String ns3) {
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "allowed_hosts": ["%s", "%s"], "namespaces": [
                    {"nsid": 1, "backend": "ram", "size": "1M"},
                    {"nsid": 2, "backend": "ram", "size": "1M"%s},
                    {"nsid": 3, "backend": "ram", "size": "1M"%s}]}]}
                """.formatted(NQN, NQN, A, B, ns2, ns3);
    }

    @BeforeEach
    void start() throws IOException {
        target = new Target();
        applier = new ConfigApplier(target);
        applier.apply(ConfigLoader.parse(config(", \"visible_to\": [\"" + A + "\"]", ", \"visible_to\": [\"" + B + "\"]")));
        port = target.ports().get(0).bound().getPort();
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    Controller connect(String host) throws IOException {
        return Nvmeof.connect("nvme+tcp://127.0.0.1:" + port + "/" + NQN, ConnectOptions.defaults()
                .identity(HostIdentity.of(host, null)).ioQueues(1).controllerLossTimeout(Duration.ZERO));
    }

    private static Status read(Controller c, int nsid) throws IOException {
        try {
            c.io(Command.of("Read", s -> s.opcode(NvmOpcode.READ.code).nsid(nsid)).dataIn(ByteBuffer.allocate(4096), 4096));
            return Status.SUCCESS;
        } catch (NvmeStatusException e) {
            return e.status();
        }
    }

    @Test
    void eachHostSeesItsOwnNamespacesOnly() throws Exception {
        try (Controller a = connect(A); Controller b = connect(B)) {
            assertEquals(List.of(1, 2), a.activeNamespaces());
            assertEquals(List.of(1, 3), b.activeNamespaces());
            assertEquals(0, a.identifyNamespace(3).nsze(), "another host's namespace reads as inactive");
            assertTrue(a.identifyNamespace(2).nsze() > 0);
            assertEquals(Status.SUCCESS, read(a, 2));
            assertEquals(Status.INVALID_NAMESPACE, read(a, 3), "no I/O to another host's namespace");
            assertEquals(Status.INVALID_NAMESPACE, read(b, 2));
            assertThrows(IOException.class, () -> a.namespace(3));
        }
    }

    @Test
    void aReloadThatChangesVisibilityTellsTheHostsConcerned() throws Exception {
        try (Controller a = connect(A); Controller b = connect(B)) {
            List<Controller.AsyncEvent> eventsA = new CopyOnWriteArrayList<>();
            List<Controller.AsyncEvent> eventsB = new CopyOnWriteArrayList<>();
            a.onEvent(eventsA::add);
            b.onEvent(eventsB::add);
            // namespace 2 becomes visible to every host; namespace 3 to none but B (unchanged)
            ConfigApplier.Changes changes = applier.apply(ConfigLoader.parse(config("",
                    ", \"visible_to\": [\"" + B + "\"]")));
            assertTrue(changes.toString().contains("namespace 2 now visible to every allowed host"), changes.toString());
            await().atMost(10, TimeUnit.SECONDS).until(() -> eventsB.stream()
                    .anyMatch(e -> e.namespaceChanged() && e.namespaces().contains(2)));
            assertEquals(List.of(1, 2, 3), b.activeNamespaces());
            assertEquals(Status.SUCCESS, read(b, 2));
            await("host A saw namespace 2 before and after: no notice").during(Duration.ofMillis(300))
                    .atMost(10, TimeUnit.SECONDS).until(eventsA::isEmpty);
            // and taken away again: B is told, and its I/O to it stops
            applier.apply(ConfigLoader.parse(config(", \"visible_to\": [\"" + A + "\"]", ", \"visible_to\": [\"" + B + "\"]")));
            await().atMost(10, TimeUnit.SECONDS).until(() -> eventsB.stream()
                    .filter(e -> e.namespaceChanged() && e.namespaces().contains(2)).count() >= 2);
            assertEquals(List.of(1, 3), b.activeNamespaces());
            assertEquals(Status.INVALID_NAMESPACE, read(b, 2));
        }
    }

    @Test
    void aVisibleHostMustBeAllowedIn() {
        io.nvmeof.daemon.config.ConfigException e = assertThrows(io.nvmeof.daemon.config.ConfigException.class,
                () -> ConfigLoader.parse(config(", \"visible_to\": [\"nqn.2026-11.io.nvmeof:stranger\"]", "")));
        assertEquals("subsystems[0].namespaces[1].visible_to[0]", e.field());
    }
}
