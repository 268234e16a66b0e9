package io.nvmeof.protocol;

/**
 * The 64-byte submission queue entry (NVMe Base 2.0, 4.2 "Submission Queue Entry"), with
 * the Fabrics command layout (NVMe-oF 1.1, 2.2 / Figure 8) and thin typed accessors over
 * CDW10-15 for the commands the stack speaks.
 *
 * <pre>
 * 00    OPC            01  FUSE(1:0) PSDT(7:6)   02-03 CID
 * 04-07 NSID (Fabrics: 04 FCTYPE)                08-15 CDW2, CDW3
 * 16-23 MPTR           24-39 DPTR / SGL1        40-63 CDW10..CDW15
 * </pre>
 */
public final class SubmissionQueueEntry extends Flyweight {
    public static final int SIZE = 64;

    public static final int OPCODE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int CID_OFFSET = 2;
    public static final int NSID_OFFSET = 4;
    public static final int FCTYPE_OFFSET = 4;
    public static final int CDW2_OFFSET = 8;
    public static final int CDW3_OFFSET = 12;
    public static final int MPTR_OFFSET = 16;
    public static final int DPTR_OFFSET = 24;
    public static final int CDW10_OFFSET = 40;
    public static final int CDW11_OFFSET = 44;
    public static final int CDW12_OFFSET = 48;
    public static final int CDW13_OFFSET = 52;
    public static final int CDW14_OFFSET = 56;
    public static final int CDW15_OFFSET = 60;

    /** PSDT value 01b: SGLs for data, metadata pointer is a contiguous buffer (Base 2.0, Figure 88). */
    public static final int PSDT_SGL_MPTR_CONTIGUOUS = 1;
    public static final int FUSE_NORMAL = 0;
    public static final int FUSE_FIRST = 1;
    public static final int FUSE_SECOND = 2;

    @Override
    public int length() {
        return SIZE;
    }

    public int opcode() {
        return u8(OPCODE_OFFSET);
    }

    public SubmissionQueueEntry opcode(int v) {
        put8(OPCODE_OFFSET, v);
        return this;
    }

    public int fuse() {
        return u8(FLAGS_OFFSET) & 0x3;
    }

    public SubmissionQueueEntry fuse(int v) {
        put8(FLAGS_OFFSET, (u8(FLAGS_OFFSET) & ~0x3) | (v & 0x3));
        return this;
    }

    public int psdt() {
        return u8(FLAGS_OFFSET) >>> 6;
    }

    public SubmissionQueueEntry psdt(int v) {
        put8(FLAGS_OFFSET, (u8(FLAGS_OFFSET) & 0x3f) | ((v & 0x3) << 6));
        return this;
    }

    public int cid() {
        return u16(CID_OFFSET);
    }

    public SubmissionQueueEntry cid(int v) {
        put16(CID_OFFSET, v);
        return this;
    }

    public int nsid() {
        return i32(NSID_OFFSET);
    }

    public SubmissionQueueEntry nsid(int v) {
        put32(NSID_OFFSET, v);
        return this;
    }

    public int fctype() {
        return u8(FCTYPE_OFFSET);
    }

    public SubmissionQueueEntry fctype(int v) {
        put8(FCTYPE_OFFSET, v);
        return this;
    }

    /** Command dword {@code n} (0..15) as an unsigned 32-bit value. */
    public long cdw(int n) {
        return u32(n * 4);
    }

    public SubmissionQueueEntry cdw(int n, long v) {
        put32(n * 4, v);
        return this;
    }

    public int cdw10() {
        return i32(CDW10_OFFSET);
    }

    public int cdw11() {
        return i32(CDW11_OFFSET);
    }

    public int cdw12() {
        return i32(CDW12_OFFSET);
    }

    // ---- SGL1 (Base 2.0, 4.1.8 "Scatter Gather List"): 16 bytes at DPTR ----

    public long sglAddress() {
        return u64(DPTR_OFFSET);
    }

    /** Length of a (non-keyed) data block descriptor, bytes 8-11 of the descriptor. */
    public long sglLength() {
        return u32(DPTR_OFFSET + 8);
    }

    /** Length of a keyed data block descriptor: 3 bytes at 8-10. */
    public int sglKeyedLength() {
        return u16(DPTR_OFFSET + 8) | u8(DPTR_OFFSET + 10) << 16;
    }

    /** Key of a keyed data block descriptor: bytes 11-14. */
    public long sglKey() {
        return u32(DPTR_OFFSET + 11);
    }

    /** SGL identifier: descriptor type in bits 7:4, sub type in bits 3:0 (byte 15). */
    public int sglIdentifier() {
        return u8(DPTR_OFFSET + 15);
    }

    /** Fills SGL1 with a data block descriptor (type/sub type from {@link Sgl}). */
    public SubmissionQueueEntry sgl(long address, long length, int identifier) {
        put64(DPTR_OFFSET, address);
        put32(DPTR_OFFSET + 8, length);
        put16(DPTR_OFFSET + 12, 0);
        put8(DPTR_OFFSET + 14, 0);
        put8(DPTR_OFFSET + 15, identifier);
        return this;
    }

    /**
     * Fills SGL1 with a keyed data block descriptor (NVMe/RDMA): host memory at {@code address},
     * {@code length} bytes (at most 2^24 - 1), remote key {@code key}.
     */
    public SubmissionQueueEntry sglKeyed(long address, int length, int key, int identifier) {
        if (length < 0 || length > Sgl.KEYED_MAX_LENGTH) {
            throw new IllegalArgumentException("keyed SGL length " + length);
        }
        put64(DPTR_OFFSET, address);
        put16(DPTR_OFFSET + 8, length & 0xffff);
        put8(DPTR_OFFSET + 10, length >>> 16);
        put32(DPTR_OFFSET + 11, key & 0xffffffffL);
        put8(DPTR_OFFSET + 15, identifier);
        return this;
    }

    /** Length of SGL1 whatever its type: 3 bytes for keyed descriptors, 4 otherwise. */
    public long sglDataLength() {
        return Sgl.type(sglIdentifier()) == Sgl.TYPE_KEYED_DATA_BLOCK ? sglKeyedLength() : sglLength();
    }

    // ---- NVM Read / Write / Compare / Write Zeroes (NVM Command Set 1.0, 3.2.4 / 3.2.6) ----

    public long slba() {
        return u64(CDW10_OFFSET);
    }

    public SubmissionQueueEntry slba(long v) {
        put64(CDW10_OFFSET, v);
        return this;
    }

    /** Number of logical blocks, converted from the 0's based NLB field (CDW12 bits 15:0). */
    public int blockCount() {
        return u16(CDW12_OFFSET) + 1;
    }

    /** Sets NLB from a 1-based block count (1..65536). */
    public SubmissionQueueEntry blockCount(int blocks) {
        if (blocks < 1 || blocks > 65536) {
            throw new IllegalArgumentException("block count must be 1..65536: " + blocks);
        }
        put16(CDW12_OFFSET, blocks - 1);
        return this;
    }

    public boolean fua() {
        return (cdw12() & (1 << 30)) != 0;
    }

    // ---- Identify (Base 2.0, 5.17): CDW10 CNS 7:0, CNTID 31:16 ----

    public int identifyCns() {
        return u8(CDW10_OFFSET);
    }

    public SubmissionQueueEntry identifyCns(int cns) {
        put32(CDW10_OFFSET, cns & 0xff);
        return this;
    }

    // ---- Get/Set Features (Base 2.0, 5.15 / 5.27): CDW10 FID 7:0, SEL 10:8, SV 31 ----

    public int featureId() {
        return u8(CDW10_OFFSET);
    }

    public SubmissionQueueEntry featureId(int fid) {
        put32(CDW10_OFFSET, fid & 0xff);
        return this;
    }

    public int featureSelect() {
        return (cdw10() >>> 8) & 0x7;
    }

    public boolean featureSave() {
        return cdw10() < 0;
    }

    /** Set Features Number of Queues, CDW11: NSQR 15:0 and NCQR 31:16, both 0's based; takes 1-based counts. */
    public SubmissionQueueEntry numberOfQueues(int submissionQueues, int completionQueues) {
        featureId(FeatureId.NUMBER_OF_QUEUES);
        put32(CDW11_OFFSET, (submissionQueues - 1) & 0xffff | ((completionQueues - 1) & 0xffffL) << 16);
        return this;
    }

    /** NSQR + 1: I/O submission queues requested. */
    public int requestedSubmissionQueues() {
        return u16(CDW11_OFFSET) + 1;
    }

    /** NCQR + 1: I/O completion queues requested. */
    public int requestedCompletionQueues() {
        return u16(CDW11_OFFSET + 2) + 1;
    }

    /** Set Features (or Get Features of) {@code fid} with CDW11 {@code value}. */
    public SubmissionQueueEntry feature(int fid, int value) {
        featureId(fid);
        put32(CDW11_OFFSET, value & 0xffffffffL);
        return this;
    }

    /** Abort (Base 2.0, 5.1): CDW10 SQID 15:0, CID 31:16. */
    public SubmissionQueueEntry abort(int sqid, int cid) {
        opcode(AdminOpcode.ABORT.code);
        put32(CDW10_OFFSET, (sqid & 0xffff) | (cid & 0xffffL) << 16);
        return this;
    }

    /** Dataset Management (NVM Command Set 1.0, 3.3.3): {@code ranges} (1..256) ranges, attributes in CDW11. */
    public SubmissionQueueEntry datasetManagement(int ranges, int attributes) {
        if (ranges < 1 || ranges > 256) {
            throw new IllegalArgumentException("Dataset Management takes 1 to 256 ranges, not " + ranges);
        }
        opcode(NvmOpcode.DATASET_MANAGEMENT.code);
        put32(CDW10_OFFSET, ranges - 1);
        put32(CDW11_OFFSET, attributes & 0xffffffffL);
        return this;
    }

    /** Read, Write, Compare or Write Zeroes of {@code blocks} blocks from {@code slba}. */
    public SubmissionQueueEntry blocks(NvmOpcode op, long slba, int blocks) {
        opcode(op.code);
        return slba(slba).blockCount(blocks);
    }

    /** Copies the whole SQE of {@code other} over this one. */
    public SubmissionQueueEntry copyFrom(SubmissionQueueEntry other) {
        for (int i = 0; i < SIZE; i += 8) {
            put64(i, other.u64(i));
        }
        return this;
    }

    // ---- Fabrics Connect (NVMe-oF 1.1, 3.3, Figure 19) ----

    public static final int CONNECT_RECFMT_OFFSET = 40;
    public static final int CONNECT_QID_OFFSET = 42;
    public static final int CONNECT_SQSIZE_OFFSET = 44;
    public static final int CONNECT_CATTR_OFFSET = 46;
    public static final int CONNECT_KATO_OFFSET = 48;
    /** CATTR bit 2: the host disables SQ flow control (NVMe-oF 1.1, Figure 19). */
    public static final int CATTR_DISABLE_SQ_FLOW_CONTROL = 1 << 2;

    public int connectRecfmt() {
        return u16(CONNECT_RECFMT_OFFSET);
    }

    public int connectQid() {
        return u16(CONNECT_QID_OFFSET);
    }

    /** SQSIZE as on the wire: 0's based. */
    public int connectSqsize() {
        return u16(CONNECT_SQSIZE_OFFSET);
    }

    public int connectCattr() {
        return u8(CONNECT_CATTR_OFFSET);
    }

    public long connectKato() {
        return u32(CONNECT_KATO_OFFSET);
    }

    /** Fills a Connect command; {@code queueSize} is 1-based and stored 0's based. */
    public SubmissionQueueEntry connect(int qid, int queueSize, int cattr, long katoMillis) {
        opcode(AdminOpcode.FABRICS.code);
        fctype(FabricsCommandType.CONNECT.code);
        put16(CONNECT_RECFMT_OFFSET, 0);
        put16(CONNECT_QID_OFFSET, qid);
        put16(CONNECT_SQSIZE_OFFSET, queueSize - 1);
        put8(CONNECT_CATTR_OFFSET, cattr);
        put32(CONNECT_KATO_OFFSET, katoMillis);
        return this;
    }

    // ---- Fabrics Authentication Send / Receive (NVMe Base 2.0, 6.2 / 6.3) ----

    public static final int AUTH_SPSP0_OFFSET = 41;
    public static final int AUTH_SPSP1_OFFSET = 42;
    public static final int AUTH_SECP_OFFSET = 43;
    /** TL of Authentication Send, AL of Authentication Receive. */
    public static final int AUTH_LENGTH_OFFSET = 44;

    public int authSecp() {
        return u8(AUTH_SECP_OFFSET);
    }

    public int authSpsp0() {
        return u8(AUTH_SPSP0_OFFSET);
    }

    public int authSpsp1() {
        return u8(AUTH_SPSP1_OFFSET);
    }

    /** Transfer length (Send) or allocation length (Receive) in bytes. */
    public long authLength() {
        return u32(AUTH_LENGTH_OFFSET);
    }

    /**
     * Fills an Authentication Send ({@code send}) or Receive of {@code length} bytes for the
     * given security protocol and its specific fields.
     */
    public SubmissionQueueEntry authentication(boolean send, int secp, int spsp0, int spsp1, int length) {
        opcode(AdminOpcode.FABRICS.code);
        fctype((send ? FabricsCommandType.AUTHENTICATION_SEND : FabricsCommandType.AUTHENTICATION_RECEIVE).code);
        put8(AUTH_SPSP0_OFFSET, spsp0);
        put8(AUTH_SPSP1_OFFSET, spsp1);
        put8(AUTH_SECP_OFFSET, secp);
        put32(AUTH_LENGTH_OFFSET, length & 0xffffffffL);
        return this;
    }

    // ---- Fabrics Property Get / Set (NVMe-oF 1.1, 3.4 / 3.5) ----

    public static final int PROPERTY_ATTRIB_OFFSET = 40;
    public static final int PROPERTY_OFST_OFFSET = 44;
    public static final int PROPERTY_VALUE_OFFSET = 48;

    /** Property size in bytes from ATTRIB bits 2:0 (0 = 4 bytes, 1 = 8 bytes); -1 if reserved. */
    public int propertySize() {
        int a = u8(PROPERTY_ATTRIB_OFFSET) & 0x7;
        return a == 0 ? 4 : a == 1 ? 8 : -1;
    }

    public long propertyOffset() {
        return u32(PROPERTY_OFST_OFFSET);
    }

    public long propertyValue() {
        return u64(PROPERTY_VALUE_OFFSET);
    }

    public SubmissionQueueEntry propertyGet(int ofst, int size) {
        opcode(AdminOpcode.FABRICS.code);
        fctype(FabricsCommandType.PROPERTY_GET.code);
        put8(PROPERTY_ATTRIB_OFFSET, size == 8 ? 1 : 0);
        put32(PROPERTY_OFST_OFFSET, ofst);
        return this;
    }

    public SubmissionQueueEntry propertySet(int ofst, int size, long value) {
        opcode(AdminOpcode.FABRICS.code);
        fctype(FabricsCommandType.PROPERTY_SET.code);
        put8(PROPERTY_ATTRIB_OFFSET, size == 8 ? 1 : 0);
        put32(PROPERTY_OFST_OFFSET, ofst);
        put64(PROPERTY_VALUE_OFFSET, value);
        return this;
    }

    @Override
    public String toString() {
        return String.format("SQE{opc=%#04x fuse=%d psdt=%d cid=%d nsid=%d sgl=[addr=%#x len=%d id=%#04x]"
                        + " cdw10=%#010x cdw11=%#010x cdw12=%#010x cdw13=%#010x cdw14=%#010x cdw15=%#010x}",
                opcode(), fuse(), psdt(), cid(), nsid(), sglAddress(), sglLength(), sglIdentifier(),
                cdw(10), cdw(11), cdw(12), cdw(13), cdw(14), cdw(15));
    }
}
