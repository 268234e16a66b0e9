package io.nvmeof.e2e;

import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.BackendSpec;
import io.nvmeof.target.backend.CephCluster;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.protocol.IdentifyNamespace;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CommandSetSuite} over NVMe/TCP with every namespace an RBD image of a real one-node Ceph
 * cluster: Read, Write, Flush, Write Zeroes, deallocate, Compare, fused Compare and Write (atomic
 * against other writers), Identify, log pages and features, as on files and RAM. Two things
 * differ, as RBD has them: a namespace's identity is the image's, and a deallocate zeroes only
 * whole objects (4 MiB), so hosts are told deallocated blocks need not read as zeroes.
 */
class CommandSetRbdTest extends CommandSetSuite {
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }

    @Override
    Backend storage(int nsid, long bytes) throws IOException {
        try {
            CEPH.get().rbd("create", "--size", Long.toString(bytes >> 20) + "M", "rbd/ns" + nsid);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return BackendSpec.open("rbd:rbd/ns" + nsid + ",conf=" + CEPH.get().conf() + ",bs=4096");
    }

    /** The image's identity: from its pool and id, as every gateway serving it derives it. */
    @Override
    UUID derivedUuid(int nsid) throws IOException {
        try {
            String info = CEPH.get().rbd("info", "rbd/ns" + nsid);
            String id = info.lines().filter(l -> l.trim().startsWith("id:")).findFirst().orElseThrow()
                    .trim().substring(3).trim();
            return UUID.nameUUIDFromBytes(("rbd:rbd/" + id).getBytes(StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** RBD discard: DLFEAT says nothing of zeroes; a whole object deallocated reads as zeroes, other blocks stay. */
    @Override
    @Test
    void datasetManagementDeallocates() throws IOException {
        ByteBuffer data = random(8 * 4096, 7);
        write(1, 1020, data.duplicate()); // blocks 1020..1027, across the first object's end
        ctrl.io(deallocate(1, ranges(0, 1024)));
        ByteBuffer back = read(1, 1020, 8);
        ByteBuffer want = data.duplicate();
        for (int i = 0; i < 4 * 4096; i++) {
            want.put(i, (byte) 0);
        }
        assertEquals(want, back.clear(), "the first 4 MiB object went; the blocks past it stay");
        IdentifyNamespace id = ctrl.identifyNamespace(1);
        assertEquals(0, id.dlfeat() & 7, "deallocated blocks are not said to read as zeroes");
        assertEquals(io.nvmeof.protocol.Status.LBA_OUT_OF_RANGE, statusOf(() -> ctrl.io(deallocate(1, ranges(2040, 100)))));
    }

    /** Copy within an image (overlapping too), and a reservation held on it: as on any storage. */
    @Test
    void copyAndReservationsOnAnImage() throws IOException {
        io.nvmeof.initiator.BlockDevice d = ctrl.namespace(4);
        ByteBuffer data = random(64 << 10, 31);
        d.write(1 << 20, data.duplicate());
        d.copy(1 << 20, 3 << 20, 64 << 10);
        ByteBuffer back = ByteBuffer.allocateDirect(64 << 10);
        d.read(3 << 20, back);
        assertEquals(data, back.flip(), "copied within the image");
        d.copy(1 << 20, (1 << 20) + 4096, 64 << 10); // overlapping, forward: as memmove
        back.clear();
        d.read((1 << 20) + 4096, back);
        assertEquals(data, back.flip(), "an overlapping copy moves as memmove");

        io.nvmeof.initiator.Reservations r = d.reservations();
        r.register(0xabcL);
        r.acquire(0xabcL, io.nvmeof.initiator.Reservations.Type.WRITE_EXCLUSIVE);
        io.nvmeof.initiator.Reservations.Report report = r.report();
        assertEquals(io.nvmeof.initiator.Reservations.Type.WRITE_EXCLUSIVE, report.type());
        d.write(0, random(4096, 1)); // the holder writes
        r.release(0xabcL, io.nvmeof.initiator.Reservations.Type.WRITE_EXCLUSIVE);
        r.unregister(0xabcL);
        assertEquals(0, r.report().registrants().size());
    }
}
