package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every admin and NVM command the target implements, through our initiator over NVMe/TCP,
 * with their error statuses. Namespace 1 is RAM, 2 a file (4 KiB blocks), 3 read-only RAM.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CommandSetSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:commands";
    static final UUID UUID2 = UUID.fromString("8f1b2a9e-1c7d-4c3e-9b5a-2d6f0e4a7c11");
    @TempDir
    static Path dir;
    Target target;
    Controller ctrl;

    @BeforeAll
    void start() throws IOException {
        target = new Target();
        Subsystem s = new Subsystem(NQN, "CMD0001", "command set", "2.5");
        s.addNamespace(new Namespace(NQN, 1, storage(1, 8 << 20), false, null));
        s.addNamespace(new Namespace(NQN, 2, storage(2, 8 << 20), false, UUID2));
        s.addNamespace(new Namespace(NQN, 3, storage(3, 1 << 20), true, null));
        s.addNamespace(new Namespace(NQN, 4, storage(4, 8 << 20), false, null));
        target.addSubsystem(s);
        InetSocketAddress a = fabric().listen(target, new InetSocketAddress("127.0.0.1", 0));
        ctrl = Nvmeof.connect(fabric().uri(a.getPort(), NQN), ConnectOptions.defaults().ioQueues(2));
    }

    /**
     * Namespace {@code nsid}'s storage, {@code bytes} large with 4 KiB blocks: 1 and 3 RAM, 2 a
     * file, 4 a file with O_DIRECT (a run of the suite on other storage gives its own).
     */
    Backend storage(int nsid, long bytes) throws IOException {
        return switch (nsid) {
            case 2 -> FileBackend.open(dir.resolve("ns2.img"), bytes, 4096, false);
            case 4 -> FileBackend.open(dir.resolve("ns4.img"), bytes, 4096, false, true);
            default -> new RamBackend(bytes, 4096);
        };
    }

    /** The UUID namespace {@code nsid} has when none is configured: derived from the NQN and NSID. */
    UUID derivedUuid(int nsid) throws IOException {
        return UUID.nameUUIDFromBytes((NQN + "/" + nsid).getBytes());
    }

    @AfterAll
    void stop() throws IOException {
        ctrl.close();
        target.close();
    }

    Status statusOf(Executable e) {
        NvmeStatusException x = assertThrows(NvmeStatusException.class, e);
        return x.status();
    }

    ByteBuffer random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return ByteBuffer.allocateDirect(len).put(b).flip();
    }

    Command io(NvmOpcode op, int nsid, long slba, int blocks) {
        return new Command(op.name()).opcode(op.code).nsid(nsid).cdw(10, (int) slba).cdw(11, (int) (slba >>> 32))
                .cdw(12, blocks - 1);
    }

    ByteBuffer read(int nsid, long slba, int blocks) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(blocks * 4096);
        ctrl.io(io(NvmOpcode.READ, nsid, slba, blocks).dataIn(b, blocks * 4096));
        return b;
    }

    void write(int nsid, long slba, ByteBuffer data) throws IOException {
        ctrl.io(io(NvmOpcode.WRITE, nsid, slba, data.remaining() / 4096).dataOut(data, data.remaining()));
    }

    /** Namespace 4 bypasses the page cache (O_DIRECT): data buffers are aligned for it, in-capsule data too. */
    @Test
    void directIoNamespace() throws IOException {
        BlockDevice dev = ctrl.namespace(4);
        for (int size : new int[] {4096, 8192, 65536, 1 << 20, 3 << 20}) {
            ByteBuffer data = random(size, size);
            long off = 4096L * (size / 4096);
            dev.write(off, data.duplicate());
            ByteBuffer back = ByteBuffer.allocateDirect(size);
            dev.read(off, back);
            assertEquals(data, back.flip(), "direct I/O of " + size + " bytes");
        }
        write(4, 7, random(4096, 5));
        ctrl.io(io(NvmOpcode.COMPARE, 4, 7, 1).dataOut(random(4096, 5), 4096));
    }

    @Test
    void writeZeroes() throws IOException {
        for (int nsid : new int[] {1, 2}) {
            write(nsid, 10, random(4 * 4096, nsid));
            ctrl.io(io(NvmOpcode.WRITE_ZEROES, nsid, 11, 2));
            ByteBuffer back = read(nsid, 10, 4);
            ByteBuffer want = random(4 * 4096, nsid);
            for (int i = 4096; i < 3 * 4096; i++) {
                want.put(i, (byte) 0);
            }
            assertEquals(want, back.clear(), "blocks 11-12 zeroed, 10 and 13 kept, nsid " + nsid);
        }
        assertEquals(Status.LBA_OUT_OF_RANGE, statusOf(() -> ctrl.io(io(NvmOpcode.WRITE_ZEROES, 1, 2047, 2))));
        assertEquals(Status.NAMESPACE_WRITE_PROTECTED, statusOf(() -> ctrl.io(io(NvmOpcode.WRITE_ZEROES, 3, 0, 1))));
    }

    ByteBuffer ranges(long... slbaAndBlocks) {
        ByteBuffer r = Flyweight.allocate(slbaAndBlocks.length / 2 * 16);
        for (int i = 0; i < slbaAndBlocks.length / 2; i++) {
            r.putInt(i * 16 + 4, (int) slbaAndBlocks[2 * i + 1]);
            r.putLong(i * 16 + 8, slbaAndBlocks[2 * i]);
        }
        return r;
    }

    Command deallocate(int nsid, ByteBuffer ranges) {
        return new Command("Dataset Management").opcode(NvmOpcode.DATASET_MANAGEMENT.code).nsid(nsid)
                .cdw(10, ranges.capacity() / 16 - 1).cdw(11, 1 << 2).dataOut(ranges, ranges.capacity());
    }

    @Test
    void datasetManagementDeallocates() throws IOException {
        for (int nsid : new int[] {1, 2}) {
            write(nsid, 100, random(8 * 4096, 7));
            ctrl.io(deallocate(nsid, ranges(101, 2, 105, 1)));
            ByteBuffer back = read(nsid, 100, 8);
            ByteBuffer want = random(8 * 4096, 7);
            for (int blk : new int[] {1, 2, 5}) {
                for (int i = blk * 4096; i < (blk + 1) * 4096; i++) {
                    want.put(i, (byte) 0);
                }
            }
            assertEquals(want, back.clear(), "deallocated blocks read as zeroes (DLFEAT 001b), nsid " + nsid);
        }
        IdentifyNamespace id = ctrl.identifyNamespace(2);
        assertEquals(1, id.dlfeat() & 7);
        assertEquals(Status.LBA_OUT_OF_RANGE, statusOf(() -> ctrl.io(deallocate(1, ranges(2040, 100)))));
        // more ranges announced than the data holds
        ByteBuffer one = ranges(0, 1);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, statusOf(() -> ctrl.io(new Command("DSM")
                .opcode(NvmOpcode.DATASET_MANAGEMENT.code).nsid(1).cdw(10, 1).cdw(11, 1 << 2).dataOut(one, 16))));
        assertEquals(Status.NAMESPACE_WRITE_PROTECTED, statusOf(() -> ctrl.io(deallocate(3, ranges(0, 1)))));
    }

    @Test
    void compare() throws IOException {
        ByteBuffer data = random(2 * 4096, 11);
        write(1, 200, data.duplicate());
        ctrl.io(io(NvmOpcode.COMPARE, 1, 200, 2).dataOut(data.duplicate(), 8192));
        ByteBuffer other = random(2 * 4096, 12);
        assertEquals(Status.COMPARE_FAILURE, statusOf(() -> ctrl.io(io(NvmOpcode.COMPARE, 1, 200, 2)
                .dataOut(other, 8192))));
        // compare works on read-only namespaces
        ctrl.io(io(NvmOpcode.COMPARE, 3, 0, 1).dataOut(ByteBuffer.allocateDirect(4096), 4096));
    }

    @Test
    void fusedCompareAndWrite() throws IOException {
        for (int nsid : new int[] {1, 2}) {
            ByteBuffer old = random(4096, 20);
            ByteBuffer fresh = random(4096, 21);
            write(nsid, 300, old.duplicate());
            // match: the write happens
            ctrl.fused(io(NvmOpcode.COMPARE, nsid, 300, 1).dataOut(old.duplicate(), 4096),
                    io(NvmOpcode.WRITE, nsid, 300, 1).dataOut(fresh.duplicate(), 4096));
            assertEquals(fresh, read(nsid, 300, 1).clear());
            // miscompare: the data stays as it was
            Command cmp = io(NvmOpcode.COMPARE, nsid, 300, 1).dataOut(old.duplicate(), 4096);
            Command wr = io(NvmOpcode.WRITE, nsid, 300, 1).dataOut(random(4096, 22), 4096);
            assertThrows(NvmeStatusException.class, () -> ctrl.fused(cmp, wr));
            assertEquals(Status.COMPARE_FAILURE, cmp.status());
            assertEquals(Status.ABORTED_FUSED_FAILED, wr.status());
            assertEquals(fresh, read(nsid, 300, 1).clear(), "a miscompare leaves the data unchanged");
        }
        // a second without its first, a first without its second
        assertEquals(Status.ABORTED_FUSED_MISSING, statusOf(() -> ctrl.io(io(NvmOpcode.WRITE, 1, 0, 1).fuse(2)
                .dataOut(ByteBuffer.allocateDirect(4096), 4096))));
        Command lonely = io(NvmOpcode.COMPARE, 1, 0, 1).fuse(1).dataOut(ByteBuffer.allocateDirect(4096), 4096);
        Command normal = io(NvmOpcode.READ, 1, 0, 1).dataIn(ByteBuffer.allocateDirect(4096), 4096);
        assertThrows(NvmeStatusException.class, () -> ctrl.backToBack(lonely, normal));
        assertEquals(Status.ABORTED_FUSED_MISSING, lonely.status());
        assertTrue(normal.status().isSuccess());
        // halves that name different blocks
        Command a = io(NvmOpcode.COMPARE, 1, 0, 1).dataOut(ByteBuffer.allocateDirect(4096), 4096);
        Command b = io(NvmOpcode.WRITE, 1, 1, 1).dataOut(ByteBuffer.allocateDirect(4096), 4096);
        assertThrows(NvmeStatusException.class, () -> ctrl.fused(a, b));
        assertEquals(Status.INVALID_FIELD, a.status());
        assertEquals(Status.INVALID_FIELD, b.status());
        IdentifyController id = ctrl.identify();
        assertEquals(1, id.fuses() & 1);
        assertEquals(0x0d, id.oncs() & 0x0d);
    }

    /** Many writers and compare-and-writes on one block: every C&W sees a whole block, never a torn one. */
    @Test
    void compareAndWriteIsAtomicAgainstOtherWriters() throws Exception {
        ByteBuffer a = ByteBuffer.allocateDirect(4096);
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        for (int i = 0; i < 4096; i++) {
            a.put(i, (byte) 0xaa);
            b.put(i, (byte) 0xbb);
        }
        BlockDevice dev = ctrl.namespace(1);
        dev.write(400L * 4096, a.duplicate());
        int successes = 0;
        for (int round = 0; round < 200; round++) {
            CompletableFuture<Void> w = dev.writeAsync(400L * 4096, (round % 2 == 0 ? b : a).duplicate());
            try {
                ctrl.fused(io(NvmOpcode.COMPARE, 1, 400, 1).dataOut(a.duplicate(), 4096),
                        io(NvmOpcode.WRITE, 1, 400, 1).dataOut(b.duplicate(), 4096));
                successes++;
            } catch (NvmeStatusException e) {
                assertEquals(Status.COMPARE_FAILURE, e.status());
            }
            w.get(10, TimeUnit.SECONDS);
            ByteBuffer back = read(1, 400, 1);
            byte first = back.get(0);
            for (int i = 1; i < 4096; i++) {
                assertEquals(first, back.get(i), "torn block in round " + round);
            }
        }
        assertTrue(successes > 0);
    }

    ByteBuffer admin(Command c, int len) throws IOException {
        ByteBuffer b = Flyweight.allocate(len);
        ctrl.admin(c.dataIn(b, len));
        return b;
    }

    @Test
    void identifyDescriptorsAreStable() throws IOException {
        ByteBuffer d = admin(Command.admin(AdminOpcode.IDENTIFY, "Identify NS descriptors").nsid(2)
                .cdw(10, IdentifyCns.NAMESPACE_ID_DESCRIPTORS), 4096);
        assertEquals(3, d.get(0), "NIDT UUID");
        assertEquals(16, d.get(1));
        ByteBuffer uuid = ByteBuffer.allocate(16).putLong(UUID2.getMostSignificantBits()).putLong(UUID2.getLeastSignificantBits());
        byte[] got = new byte[16];
        d.get(4, got);
        assertArrayEquals(uuid.array(), got);
        assertEquals(2, d.get(20), "NIDT NGUID");
        assertEquals(Status.INVALID_NAMESPACE, statusOf(() -> admin(Command.admin(AdminOpcode.IDENTIFY, "Identify")
                .nsid(9).cdw(10, IdentifyCns.NAMESPACE_ID_DESCRIPTORS), 4096)));
        // ns 1 has a UUID derived from NQN and NSID: the same on every call (and every restart)
        ByteBuffer d1 = admin(Command.admin(AdminOpcode.IDENTIFY, "Identify").nsid(1).cdw(10, 3), 4096);
        ByteBuffer again = admin(Command.admin(AdminOpcode.IDENTIFY, "Identify").nsid(1).cdw(10, 3), 4096);
        assertEquals(d1, again);
        assertEquals(derivedUuid(1).getMostSignificantBits(), d1.order(ByteOrder.BIG_ENDIAN).getLong(4));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> admin(Command.admin(AdminOpcode.IDENTIFY, "Identify CNS 0x1f")
                .cdw(10, 0x1f), 4096)));
    }

    Command getLog(int lid, int nsid, long offset, int len) {
        Command c = Command.admin(AdminOpcode.GET_LOG_PAGE, "Get Log Page " + lid).nsid(nsid);
        long numd = len / 4 - 1;
        return c.cdw(10, lid | (int) (numd & 0xffff) << 16).cdw(11, (int) (numd >>> 16)).cdw(12, (int) offset);
    }

    @Test
    void logPages() throws IOException {
        write(1, 0, random(4096, 1));
        read(1, 0, 1);
        ByteBuffer smart = admin(getLog(LogPage.SMART_HEALTH, -1, 0, 512), 512);
        assertEquals(100, smart.get(3), "available spare");
        assertTrue(smart.getLong(64) > 0, "host read commands");
        assertTrue(smart.getLong(80) > 0, "host write commands");
        assertTrue(smart.getLong(48) > 0, "data units written");
        ByteBuffer fw = admin(getLog(LogPage.FIRMWARE_SLOT, 0, 0, 512), 512);
        assertEquals(1, fw.get(0), "slot 1 active");
        byte[] fr = new byte[3];
        fw.get(8, fr);
        assertEquals("2.5", new String(fr));
        // a failed command is in the error log, newest first, and counted in SMART
        assertEquals(Status.LBA_OUT_OF_RANGE, statusOf(() -> read(1, 1L << 20, 1)));
        ByteBuffer err = admin(getLog(LogPage.ERROR_INFORMATION, 0, 0, 64), 64);
        assertTrue(err.getLong(0) > 0, "error count");
        assertEquals(Status.LBA_OUT_OF_RANGE.field(), err.getShort(12) & 0xfffe, "status of the newest error");
        assertEquals(1L << 20, err.getLong(16), "its LBA");
        assertEquals(1, err.getInt(24), "its namespace");
        assertTrue(admin(getLog(LogPage.SMART_HEALTH, -1, 0, 512), 512).getLong(176) >= err.getLong(0));
        ByteBuffer effects = admin(getLog(LogPage.COMMANDS_SUPPORTED_AND_EFFECTS, 0, 0, 4096), 4096);
        assertEquals(1, effects.getInt(AdminOpcode.IDENTIFY.code * 4) & 1, "Identify supported");
        assertEquals(0, effects.getInt(AdminOpcode.FORMAT_NVM.code * 4), "Format NVM not supported");
        assertEquals(3, effects.getInt(1024 + NvmOpcode.WRITE.code * 4) & 3, "Write supported, changes data");
        assertEquals(1, effects.getInt(1024 + NvmOpcode.READ.code * 4) & 3, "Read supported, changes nothing");
        ByteBuffer changed = admin(getLog(LogPage.CHANGED_NAMESPACE_LIST, 0, 0, 4096), 4096);
        assertEquals(0, changed.getInt(0), "nothing changed since connect");
        // an offset inside the page, and beyond it
        ByteBuffer tail = admin(getLog(LogPage.SMART_HEALTH, -1, 64, 32), 32);
        assertEquals(smart.getLong(64), tail.getLong(0));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> admin(getLog(LogPage.SMART_HEALTH, -1, 1024, 32), 32)));
        assertEquals(Status.INVALID_LOG_PAGE, statusOf(() -> admin(getLog(0x7f, 0, 0, 512), 512)));
        assertEquals(Status.INVALID_LOG_PAGE, statusOf(() -> admin(getLog(LogPage.DISCOVERY, 0, 0, 1024), 1024)),
                "the discovery log belongs to discovery controllers");
    }

    long getFeature(int fid, int cdw11) throws IOException {
        return ctrl.admin(Command.admin(AdminOpcode.GET_FEATURES, "Get Features " + fid).cdw(10, fid).cdw(11, cdw11))
                .result();
    }

    Command setFeature(int fid, int cdw11) {
        return Command.admin(AdminOpcode.SET_FEATURES, "Set Features " + fid).cdw(10, fid).cdw(11, cdw11);
    }

    @Test
    void features() throws IOException {
        assertEquals(1, getFeature(FeatureId.VOLATILE_WRITE_CACHE, 0));
        assertEquals(5000, getFeature(FeatureId.KEEP_ALIVE_TIMER, 0), "KATO from Connect");
        long nq = getFeature(FeatureId.NUMBER_OF_QUEUES, 0);
        assertTrue((nq & 0xffff) >= 1);
        assertEquals(0, getFeature(FeatureId.ARBITRATION, 0));
        assertEquals(0, getFeature(FeatureId.POWER_MANAGEMENT, 0));
        assertEquals(0, getFeature(FeatureId.ERROR_RECOVERY, 0));
        assertTrue(getFeature(FeatureId.TEMPERATURE_THRESHOLD, 0) > 273);
        ByteBuffer hostId = Flyweight.allocate(16);
        ctrl.admin(Command.admin(AdminOpcode.GET_FEATURES, "Host Identifier").cdw(10, FeatureId.HOST_IDENTIFIER).cdw(11, 1)
                .dataIn(hostId, 16));
        assertEquals(ConnectOptions.defaults().identity().hostId().getMostSignificantBits(),
                hostId.order(ByteOrder.BIG_ENDIAN).getLong(0));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> ctrl.admin(Command.admin(AdminOpcode.GET_FEATURES, "Host Id")
                .cdw(10, FeatureId.HOST_IDENTIFIER).cdw(11, 0).dataIn(Flyweight.allocate(16), 16))), "EXHID required");
        ctrl.admin(setFeature(FeatureId.ASYNC_EVENT_CONFIG, 1 << 8));
        assertEquals(1 << 8, getFeature(FeatureId.ASYNC_EVENT_CONFIG, 0));
        ctrl.admin(setFeature(FeatureId.VOLATILE_WRITE_CACHE, 1));
        assertEquals(Status.FEATURE_NOT_CHANGEABLE, statusOf(() -> ctrl.admin(setFeature(FeatureId.VOLATILE_WRITE_CACHE, 0))));
        // the settable ones keep what they are set to
        ctrl.admin(setFeature(FeatureId.ARBITRATION, 0x03020103));
        assertEquals(0x03020103, getFeature(FeatureId.ARBITRATION, 0));
        ctrl.admin(setFeature(FeatureId.TEMPERATURE_THRESHOLD, 350));
        ctrl.admin(setFeature(FeatureId.TEMPERATURE_THRESHOLD, 1 << 20 | 260));
        assertEquals(350, getFeature(FeatureId.TEMPERATURE_THRESHOLD, 0) & 0xffff);
        assertEquals(260, getFeature(FeatureId.TEMPERATURE_THRESHOLD, 1 << 20) & 0xffff);
        assertEquals(Status.INVALID_FIELD, statusOf(() -> ctrl.admin(setFeature(FeatureId.TEMPERATURE_THRESHOLD, 3 << 16))),
                "no sensor 3");
        ctrl.admin(setFeature(FeatureId.ERROR_RECOVERY, 100));
        assertEquals(100, getFeature(FeatureId.ERROR_RECOVERY, 0));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> ctrl.admin(setFeature(FeatureId.ERROR_RECOVERY, 1 << 16))),
                "DULBE not supported");
        ctrl.admin(setFeature(FeatureId.POWER_MANAGEMENT, 0));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> ctrl.admin(setFeature(FeatureId.POWER_MANAGEMENT, 1))),
                "only power state 0");
        ctrl.admin(setFeature(FeatureId.KEEP_ALIVE_TIMER, 10_000));
        assertEquals(10_000, getFeature(FeatureId.KEEP_ALIVE_TIMER, 0));
        assertEquals(Status.COMMAND_SEQUENCE_ERROR, statusOf(() -> ctrl.admin(setFeature(FeatureId.HOST_IDENTIFIER, 1)
                .dataOut(Flyweight.allocate(16), 16))));
        assertEquals(Status.COMMAND_SEQUENCE_ERROR, statusOf(() -> ctrl.admin(setFeature(FeatureId.NUMBER_OF_QUEUES, 0))),
                "queues exist already");
        assertEquals(Status.FEATURE_NOT_SAVEABLE, statusOf(() -> ctrl.admin(Command.admin(AdminOpcode.SET_FEATURES, "save")
                .cdw(10, FeatureId.ASYNC_EVENT_CONFIG | 1 << 31))));
        assertEquals(Status.INVALID_FIELD, statusOf(() -> getFeature(0x7e, 0)));
        assertEquals(Status.INVALID_OPCODE, statusOf(() -> ctrl.admin(Command.admin(AdminOpcode.FORMAT_NVM, "Format"))));
    }

    @Test
    void abortAndKeepAlive() throws IOException {
        ctrl.admin(Command.admin(AdminOpcode.KEEP_ALIVE, "Keep Alive"));
        // Abort of a command that is not outstanding: DW0 bit 0 set, "not aborted"
        long r = ctrl.admin(Command.admin(AdminOpcode.ABORT, "Abort").cdw(10, 1 | 0x1234 << 16)).result();
        assertEquals(1, r & 1);
    }
}
