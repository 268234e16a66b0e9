package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * mDNS discovery (TP8009) both ways with SPDK, where SPDK is built with Avahi ({@code
 * bench/spdk/build-spdk.sh}): SPDK's {@code nvmf_tgt}, on a gateway of its own with a private
 * avahi-daemon there, publishes its discovery listener ({@code nvmf_publish_mdns_prr}) and our
 * {@code nvmeof discover --mdns} from the hosts' namespace finds it and reads its log; then our
 * target announces itself ({@code --mdns}) and SPDK's host ({@code bdev_nvme_start_mdns_discovery})
 * finds it and attaches its namespace as a bdev. SPDK stops publishing before it browses: its host
 * otherwise also finds its own publication at every address of its namespace, and its discovery
 * poller stalls on those it does not listen on (SPDK v25.09).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SpdkMdnsTest {
    static final String SPDK_NQN = "nqn.2026-12.io.spdk:mdns-vol";
    static final String OUR_NQN = "nqn.2026-12.io.nvmeof:mdns-for-spdk";
    static final Path SCRIPTS = Path.of("..", "test", "mdns").toAbsolutePath().normalize();

    @Test
    void spdkPublishesOursFindsAndOursPublishesSpdkAttaches(@TempDir Path dir) throws Exception {
        Path config = SpdkMultipathTest.SPDK.resolve("mk/config.mk");
        boolean built = Files.isExecutable(SpdkMultipathTest.SPDK.resolve("build/bin/nvmf_tgt")) && Files.isRegularFile(config)
                && Files.readString(config).contains("CONFIG_AVAHI?=y");
        if (!built) {
            System.out.println("SpdkMdnsTest SKIPPED: no SPDK build with Avahi at " + SpdkMultipathTest.SPDK
                    + " (bench/spdk/build-spdk.sh builds one)");
        }
        assumeTrue(built, "no SPDK build with Avahi");
        if (!MdnsDiscoveryTest.avahi()) {
            System.out.println("SpdkMdnsTest SKIPPED: avahi-daemon, avahi-utils or dbus not installed");
        }
        assumeTrue(MdnsDiscoveryTest.avahi(), "no Avahi");
        try (NetnsLab lab = NetnsLab.create("ours", "spdk")) {
            String spdkAddr = lab.hostAddress("spdk");
            String ourAddr = lab.hostAddress("ours");
            Path avahi = dir.resolve("avahi");
            MdnsDiscoveryTest.Out started = MdnsDiscoveryTest.run(List.of("bash", SCRIPTS.resolve("avahi-in-netns.sh").toString(),
                    "start", lab.ns("spdk"), avahi.toString()), Map.of(), 60);
            assertEquals(0, started.exit(), started.err());
            SpdkMultipathTest.Spdk spdk = new SpdkMultipathTest.Spdk(dir, "mdns", 1, List.of("ip", "netns", "exec", lab.ns("spdk")),
                    List.of("build/bin/nvmf_tgt")).env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=" + avahi.resolve("bus"));
            TargetProcess ours = null;
            try {
                spdk.start();
                spdk.rpc("nvmf_create_transport -t tcp", "bdev_malloc_create -b m0 64 4096",
                        "nvmf_create_subsystem " + SPDK_NQN + " -a", "nvmf_subsystem_add_ns " + SPDK_NQN + " m0",
                        "nvmf_subsystem_add_listener " + SPDK_NQN + " -t tcp -a " + spdkAddr + " -s 4420",
                        "nvmf_subsystem_add_listener nqn.2014-08.org.nvmexpress.discovery -t tcp -a " + spdkAddr + " -s 8009",
                        "nvmf_publish_mdns_prr");
                // ours finds SPDK's publication and reads the log behind it
                Awaitility.await("SPDK's publication").atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO).until(() -> {
                    MdnsDiscoveryTest.Out o = MdnsDiscoveryTest.nvmeof(lab, "hosts", "discover", "--mdns", "--mdns-wait", "3");
                    return o.out().contains("at nvme+tcp://" + spdkAddr + ":8009") && o.out().contains("subnqn:  " + SPDK_NQN);
                });
                spdk.rpc("nvmf_stop_mdns_prr");
                // SPDK's host finds ours and attaches our namespace
                ours = TargetProcess.startIn(List.of("ip", "netns", "exec", lab.ns("ours")), List.of(), Map.of(), Fabric.TCP, dir,
                        "--listen", "tcp://" + ourAddr + ":4420", "--subsystem", OUR_NQN, "--namespace", "null:64M",
                        "--discovery", "tcp://" + ourAddr + ":8009", "--mdns");
                TargetProcess t = ours;
                t.await("both ports announced", () -> t.out().split("announced over mDNS", -1).length == 3);
                spdk.rpc("bdev_nvme_start_mdns_discovery -b ours -s _nvme-disc._tcp -q nqn.2026-12.io.spdk:host");
                Awaitility.await("SPDK attaches our namespace").atMost(Duration.ofSeconds(60)).until(() ->
                        spdk.rpcOutput("bdev_get_bdevs").contains("\"subnqn\": \"" + OUR_NQN + "\""));
                String info = spdk.rpcOutput("bdev_nvme_get_mdns_discovery_info");
                assertTrue(info.contains("\"traddr\": \"" + ourAddr + "\"") && info.contains("\"trsvcid\": \"8009\""), info);
                assertTrue(t.err().contains("for nqn.2026-12.io.spdk:host connected"), t.err());
                spdk.rpc("bdev_nvme_stop_mdns_discovery -b ours");
                assertEquals(0, ours.stop());
                ours.assertNoLeaks();
            } finally {
                if (ours != null) {
                    ours.close();
                }
                spdk.stop();
                MdnsDiscoveryTest.run(List.of("bash", SCRIPTS.resolve("avahi-in-netns.sh").toString(), "stop", avahi.toString()),
                        Map.of(), 30);
            }
        }
    }
}
