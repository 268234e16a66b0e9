package io.nvmeof.protocol;

/**
 * One 1024-byte entry of the Discovery Log Page (NVMe-oF 1.1, 5.3, Figure 38), preceded in
 * the page by a 1024-byte header ({@link #HEADER_SIZE}: GENCTR 0-7, NUMREC 8-15, RECFMT 16-17).
 *
 * <pre>
 * 000 TRTYPE  001 ADRFAM  002 SUBTYPE  003 TREQ  004-005 PORTID  006-007 CNTLID
 * 008-009 ASQSZ  010-011 EFLAGS  032-063 TRSVCID  256-511 SUBNQN  512-767 TRADDR  768-1023 TSAS
 * </pre>
 */
public final class DiscoveryLogEntry extends Flyweight {
    public static final int SIZE = 1024;
    public static final int HEADER_SIZE = 1024;
    public static final int GENCTR_OFFSET = 0;
    public static final int NUMREC_OFFSET = 8;
    public static final int RECFMT_OFFSET = 16;

    public static final int TRTYPE_OFFSET = 0;
    public static final int ADRFAM_OFFSET = 1;
    public static final int SUBTYPE_OFFSET = 2;
    public static final int TREQ_OFFSET = 3;
    public static final int PORTID_OFFSET = 4;
    public static final int CNTLID_OFFSET = 6;
    public static final int ASQSZ_OFFSET = 8;
    public static final int EFLAGS_OFFSET = 10;
    public static final int TRSVCID_OFFSET = 32;
    public static final int TRSVCID_LENGTH = 32;
    public static final int SUBNQN_OFFSET = 256;
    public static final int TRADDR_OFFSET = 512;
    public static final int TRADDR_LENGTH = 256;
    public static final int TSAS_OFFSET = 768;
    public static final int TSAS_LENGTH = 256;

    /** TRTYPE (NVMe-oF 1.1, Figure 38). */
    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_FC = 2;
    public static final int TRTYPE_TCP = 3;
    /** TSAS bytes for RDMA (NVMe/RDMA 1.0, Figure 3): QPTYPE, PRTYPE, CMS; PKEY at 8-9. */
    public static final int TSAS_RDMA_QPTYPE = 0;
    public static final int TSAS_RDMA_PRTYPE = 1;
    public static final int TSAS_RDMA_CMS = 2;
    public static final int RDMA_QPTYPE_CONNECTED = 1;
    public static final int RDMA_QPTYPE_DATAGRAM = 2;
    public static final int RDMA_PRTYPE_NOT_SPECIFIED = 1;
    public static final int RDMA_PRTYPE_IB = 2;
    public static final int RDMA_PRTYPE_ROCE = 3;
    public static final int RDMA_PRTYPE_ROCEV2 = 4;
    public static final int RDMA_PRTYPE_IWARP = 5;
    public static final int RDMA_CMS_RDMA_CM = 1;
    /** ADRFAM. */
    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    /** SUBTYPE: a referral to another discovery service, an NVM subsystem, this discovery subsystem. */
    public static final int SUBTYPE_REFERRAL = 1;
    public static final int SUBTYPE_NVM = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    /** TREQ bits 1:0: secure channel not specified / required / not required; bit 2: SQ flow control may be disabled. */
    public static final int TREQ_SECURE_CHANNEL_REQUIRED = 1;
    public static final int TREQ_SECURE_CHANNEL_NOT_REQUIRED = 2;
    /** TSAS byte 0 for NVMe/TCP: SECTYPE (NVMe/TCP 1.1, Figure 7): 0 none, 1 TLS 1.2, 2 TLS 1.3. */
    public static final int TSAS_TCP_SECTYPE = 0;
    public static final int SECTYPE_TLS13 = 2;
    public static final int TREQ_SQ_FLOW_CONTROL_DISABLE = 1 << 2;
    /** EFLAGS bit 1: duplicate returned information; bit 2: explicit persistent connection support (DLP). */
    public static final int EFLAGS_EPCSD = 1 << 1;

    @Override
    public int length() {
        return SIZE;
    }

    public int trtype() { return u8(TRTYPE_OFFSET); }
    public int adrfam() { return u8(ADRFAM_OFFSET); }
    public int subtype() { return u8(SUBTYPE_OFFSET); }
    public int treq() { return u8(TREQ_OFFSET); }

    public DiscoveryLogEntry treq(int v) {
        put8(TREQ_OFFSET, v);
        return this;
    }

    public int portId() { return u16(PORTID_OFFSET); }
    public int cntlid() { return u16(CNTLID_OFFSET); }
    public int asqsz() { return u16(ASQSZ_OFFSET); }
    public int eflags() { return u16(EFLAGS_OFFSET); }
    public String trsvcid() { return ascii(TRSVCID_OFFSET, TRSVCID_LENGTH); }
    public String subsystemNqn() { return ascii(SUBNQN_OFFSET, 256); }
    public String traddr() { return ascii(TRADDR_OFFSET, TRADDR_LENGTH); }
    /** TSAS byte 0 for TCP: SECTYPE (0 = no security). */
    public int tsasByte(int i) { return u8(TSAS_OFFSET + i); }

    /** Writes a whole entry; ASCII fields are space padded as Linux nvmet writes them. */
    public DiscoveryLogEntry encode(int trtype, int adrfam, int subtype, int treq, int portId, int cntlid, int asqsz,
                                    int eflags, String trsvcid, String subnqn, String traddr) {
        clear();
        put8(TRTYPE_OFFSET, trtype);
        put8(ADRFAM_OFFSET, adrfam);
        put8(SUBTYPE_OFFSET, subtype);
        put8(TREQ_OFFSET, treq);
        put16(PORTID_OFFSET, portId);
        put16(CNTLID_OFFSET, cntlid);
        put16(ASQSZ_OFFSET, asqsz);
        put16(EFLAGS_OFFSET, eflags);
        putAscii(TRSVCID_OFFSET, TRSVCID_LENGTH, trsvcid, (byte) ' ', "TRSVCID");
        putAscii(SUBNQN_OFFSET, 256, subnqn, (byte) 0, "SUBNQN");
        putAscii(TRADDR_OFFSET, TRADDR_LENGTH, traddr, (byte) ' ', "TRADDR");
        return this;
    }

    /** The 256 bytes of TSAS. */
    public byte[] tsas() { return bytes(TSAS_OFFSET, TSAS_LENGTH); }

    public DiscoveryLogEntry tsas(byte[] tsas) {
        putBytes(TSAS_OFFSET, tsas, TSAS_LENGTH);
        return this;
    }

    /** Sets TSAS byte {@code i} (RDMA: QPTYPE, PRTYPE, CMS, PKEY; TCP: SECTYPE). */
    public DiscoveryLogEntry tsasByte(int i, int v) {
        put8(TSAS_OFFSET + i, v);
        return this;
    }

    @Override
    public String toString() {
        return "DiscoveryLogEntry{trtype=" + trtype() + " adrfam=" + adrfam() + " subtype=" + subtype() + " portid="
                + portId() + " trsvcid=" + trsvcid() + " subnqn=" + subsystemNqn() + " traddr=" + traddr() + "}";
    }
}
