package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.target.backend.CephCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;

/**
 * One gateway of a gateway group in a test: a target process serving subsystem {@link #nqn} from
 * RBD image {@code rbd/IMAGE} of a test cluster, in a gateway group whose members and preferred
 * owner of ANA group 1 the test names; its directory, configuration, process and management
 * socket. Controller IDs are {@code index*1000+1 .. index*1000+999}.
 */
final class GroupGateway implements AutoCloseable {
    private static final Pattern THROUGH = Pattern.compile("through (\\S+?/\\d+)");

    /** What the test says about the group, the same for every member. */
    record Group(String nqn, String image, long leaseMs, long failbackDelayMs, String preferred,
            Map<String, String> members) {
    }

    final String name;
    final Path dir;
    final Path config;
    final Path socket;
    final List<String> launcher;
    /** Settings of its configuration besides the lease and the op timeout ({@code "key": value, ...}, or empty). */
    String settings = "";
    TargetProcess process;

    /**
     * Gateway {@code name} listening on {@code traddr:trsvcid} (0: any free port), started by
     * {@code launcher} (empty, or {@code ip netns exec NS} for a gateway in a namespace).
     */
    GroupGateway(Path parent, Group group, String name, int index, CephCluster ceph, String traddr, int trsvcid,
            List<String> launcher) throws Exception {
        this.name = name;
        this.launcher = launcher;
        this.dir = Files.createDirectories(parent.resolve("gw-" + name));
        this.socket = dir.resolve("rpc.sock");
        this.config = dir.resolve("target.json");
        StringBuilder members = new StringBuilder();
        new TreeMap<>(group.members()).forEach((n, address) -> members.append(members.length() == 0 ? "" : ", ")
                .append("{\"name\": \"%s\", \"address\": \"%s\"}".formatted(n, address)));
        Files.writeString(config, """
                {"settings": {"gateway_lease_ms": %d, "rbd_op_timeout_ms": 3000},
                 "rbd_clusters": [{"name": "main", "conf": "%s"}],
                 "gateway_group": {"name": "gwtest", "self": "%s", "cluster": "main", "members": [%s],
                   "ana_groups": [{"grpid": 1, "preferred": "%s"}], "failback_delay_ms": %d},
                 "ports": [{"portid": 1, "traddr": "%s", "trsvcid": %d, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "serial": "gwtest", "gateways": true, "cntlid_min": %d,
                   "cntlid_max": %d, "namespaces": [{"nsid": 1, "backend": "rbd", "cluster": "main", "pool": "rbd",
                   "image": "%s", "ana_grpid": 1}]}]}
                """.formatted(group.leaseMs(), ceph.conf(), name, members, group.preferred(), group.failbackDelayMs(),
                traddr, trsvcid, group.nqn(), group.nqn(), 1 + index * 1000, 999 + index * 1000, group.image()));
    }

    void start() throws Exception {
        Files.deleteIfExists(socket);
        if (!settings.isEmpty()) { // written once the test has said
            Files.writeString(config, Files.readString(config).replace("\"rbd_op_timeout_ms\": 3000", "\"rbd_op_timeout_ms\": 3000, "
                    + settings));
            settings = "";
        }
        process = TargetProcess.startIn(launcher, List.of(), Map.of(), Fabric.TCP, dir, "--config", config.toString(),
                "--rpc-socket", socket.toString());
        process.await("the management API", () -> process.out().contains("management API on"));
    }

    JsonNode group() throws Exception {
        return ManagementApiTest.rpc(socket, "get_gateway_group", "{}").get("result");
    }

    /** Its role for ANA group 1: owner, standby or lost. */
    String role() throws Exception {
        return group().path("ana_groups").get(0).path("role").asText();
    }

    void awaitRole(String role, Duration within) {
        Awaitility.await(name + " " + role).atMost(within).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> role.equals(role()));
    }

    /** This gateway's client address, from its join or rejoin event. */
    String address() throws Exception {
        String addr = null;
        for (JsonNode e : group().path("events")) {
            Matcher m = THROUGH.matcher(e.path("what").asText());
            if (m.find()) {
                addr = m.group(1);
            }
        }
        return addr;
    }

    /** ANA group 1's state on port 1. */
    String anaState() throws Exception {
        for (JsonNode p : ManagementApiTest.rpc(socket, "get_ana_states", "{}").get("result")) {
            for (JsonNode g : p.path("ana_groups")) {
                if (g.path("grpid").asInt() == 1) {
                    return g.path("state").asText();
                }
            }
        }
        return null;
    }

    /** Stops it (SIGTERM) if it runs, and holds it to a clean exit with no leaked buffers. */
    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            int exit = process.stop();
            assertEquals(0, exit, process.out() + process.err());
            process.assertNoLeaks();
        }
    }
}
