package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.IdentifyController;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Our initiator against the Linux kernel's nvmet-tcp target. Runs when
 * {@code -Dnvmeof.kernel.target=HOST:PORT} and {@code -Dnvmeof.kernel.nqn=NQN} name one
 * (test/kernel/run-kernel-interop.sh boots it in a QEMU guest and sets them); skipped otherwise.
 */
class KernelTargetInteropTest {
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void againstTheKernelTarget() throws Exception {
        String where = System.getProperty("nvmeof.kernel.target");
        String nqn = System.getProperty("nvmeof.kernel.nqn");
        assumeTrue(where != null && nqn != null, "no kernel target given (-Dnvmeof.kernel.target, -Dnvmeof.kernel.nqn)");

        // the kernel target's discovery service (on the same port for nvmet)
        Discovery.Log log = Nvmeof.discover("nvme+tcp://" + where);
        System.out.println("discovery log generation " + log.generation() + ": " + log.entries());
        assertTrue(log.entries().stream().anyMatch(e -> e.subsystemNqn().equals(nqn)
                && e.subtype() == 2 && e.transportName().equals("tcp")), "the kernel lists " + nqn);

        ConnectOptions o = ConnectOptions.defaults().ioQueues(4).queueSize(64);
        try (Controller c = Nvmeof.connect("nvme+tcp://" + where + "/" + nqn, o)) {
            IdentifyController id = c.identify();
            System.out.println("kernel target: " + id);
            assertEquals(nqn, id.subsystemNqn());
            assertEquals("Linux", id.modelNumber());
            assertTrue(c.ioQueueCount() >= 2, "several I/O queues: " + c.ioQueueCount());
            BlockDevice dev = c.namespace(c.activeNamespaces().get(0));
            assertTrue(dev.size() >= 64 << 20, "size " + dev.size());

            // 16 MiB of random data in 64 KiB pieces at random distinct offsets, 16 in flight
            int piece = 64 << 10;
            int pieces = 256;
            long slots = dev.size() / piece;
            Random rnd = new Random(1122);
            List<Long> offsets = new ArrayList<>();
            Set<Long> used = new HashSet<>();
            while (offsets.size() < pieces) {
                long off = (long) (rnd.nextDouble() * slots) * piece;
                if (used.add(off)) {
                    offsets.add(off);
                }
            }
            byte[] data = new byte[piece * pieces];
            rnd.nextBytes(data);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < pieces; i++) {
                writes.add(dev.writeAsync(offsets.get(i), ByteBuffer.wrap(data, i * piece, piece)));
                if (writes.size() % 16 == 0) {
                    CompletableFuture.allOf(writes.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
                }
            }
            CompletableFuture.allOf(writes.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
            dev.flush();
            for (int i = 0; i < pieces; i++) {
                ByteBuffer back = ByteBuffer.allocate(piece);
                dev.read(offsets.get(i), back);
                assertEquals(ByteBuffer.wrap(data, i * piece, piece), back.flip(), "piece " + i);
            }
            // discard: accepted by the kernel target (which deallocates the file range)
            dev.discard(offsets.get(0), piece);
            // Write Zeroes: nvmet's file backend uses fallocate(ZERO_RANGE), which the guest's tmpfs
            // lacks; it then answers with command specific status 83h. Either outcome is the target's.
            try {
                dev.writeZeroes(offsets.get(1), piece);
                ByteBuffer zeros = ByteBuffer.allocate(piece);
                dev.read(offsets.get(1), zeros);
                assertEquals(ByteBuffer.allocate(piece), zeros.flip(), "write zeroes");
            } catch (NvmeStatusException e) {
                assertEquals(1, e.status().sct(), e.getMessage());
                assertEquals(0x83, e.status().sc(), e.getMessage());
                System.out.println("kernel target: write zeroes unsupported by its backing file system: " + e.status());
            }
            System.out.println("kernel target interop: 16 MiB verified over " + c.ioQueueCount() + " queues");
        }
    }
}
