package io.nvmeof.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The data of a Discovery Information Management command (TP8010, "Discovery Information
 * Management command"; Base 2.0c, 5.3): who registers (an entity: a host, a direct or a central
 * discovery controller) and the discovery information entries it registers, in the basic format
 * (a 1024-byte discovery log entry each) or the extended one (the same 1024 bytes, then TEL,
 * NUMEXAT and extended attributes: the host identifier, a symbolic name).
 *
 * <pre>
 * header (1024 B): 0 TDL (4)  8 NUMENT (8)  16 ENTFMT (2)  18 ETYPE (2)  20 PORTLCL  22 EKTYPE (2)
 *                  24 EID (256, the entity's NQN)  280 ENAME (256)  536 EVER (64)
 * entry:           0..1023 as a discovery log entry (EFLAGS reserved); extended: 1024 TEL (4),
 *                  1028 NUMEXAT (2), 1032 attributes: EXATTYPE (2), EXATLEN (2), EXATVAL (EXATLEN, 4-byte multiple)
 * </pre>
 *
 * {@link #parse} takes hostile bytes: every length is checked against what is there before it
 * is followed, and every text field must be printable ASCII; a failure names the field.
 */
public record DiscoveryInformation(int entityType, String entityId, String entityName, String entityVersion,
                                   List<Entry> entries) {
    public static final int HEADER_SIZE = 1024;
    public static final int TDL_OFFSET = 0;
    public static final int NUMENT_OFFSET = 8;
    public static final int ENTFMT_OFFSET = 16;
    public static final int ETYPE_OFFSET = 18;
    public static final int PORTLCL_OFFSET = 20;
    public static final int EKTYPE_OFFSET = 22;
    public static final int EID_OFFSET = 24;
    public static final int EID_LENGTH = 256;
    public static final int ENAME_OFFSET = 280;
    public static final int ENAME_LENGTH = 256;
    public static final int EVER_OFFSET = 536;
    public static final int EVER_LENGTH = 64;
    /** The fixed part of an extended entry: the 1024-byte entry, TEL and NUMEXAT (and 2 reserved bytes). */
    public static final int EXTENDED_ENTRY_FIXED = 1032;
    public static final int TEL_OFFSET = 1024;
    public static final int NUMEXAT_OFFSET = 1028;

    /** TAS, Command Dword 10 bits 3:0. */
    public static final int TAS_REGISTER = 0;
    public static final int TAS_DEREGISTER = 1;
    public static final int TAS_UPDATE = 2;
    /** ENTFMT. */
    public static final int ENTFMT_BASIC = 1;
    public static final int ENTFMT_EXTENDED = 2;
    /** ETYPE. */
    public static final int ETYPE_HOST = 1;
    public static final int ETYPE_DDC = 2;
    public static final int ETYPE_CDC = 3;
    /** EKTYPE: the only value TP8010 gives (libnvme sends it too). */
    public static final int EKTYPE = 0x5F;
    /** EXATTYPE. */
    public static final int EXAT_HOST_ID = 1;
    public static final int EXAT_SYMBOLIC_NAME = 2;
    /** The longest symbolic name kept (as ENAME's field): a longer one is refused, not stored. */
    public static final int SYMBOLIC_NAME_MAX = 256;

    public DiscoveryInformation {
        entries = List.copyOf(entries);
    }

    /**
     * One registered entry. {@code traddr} empty means "the address I came from" (libnvme
     * registers a host that way); {@code hostId} is 16 bytes or absent.
     */
    public record Entry(int trtype, int adrfam, int subtype, int treq, int portId, int cntlid, int asqsz, String trsvcid,
                        String nqn, String traddr, byte[] tsas, byte[] hostId, String symbolicName) {
        public Entry {
            tsas = tsas == null ? new byte[DiscoveryLogEntry.TSAS_LENGTH] : tsas.clone();
            hostId = hostId == null ? null : hostId.clone();
        }

        @Override
        public byte[] tsas() {
            return tsas.clone();
        }

        @Override
        public byte[] hostId() {
            return hostId == null ? null : hostId.clone();
        }

        /** This entry with another transport address (the registrant's, where it left TRADDR empty). */
        public Entry withTraddr(String address, int family) {
            return new Entry(trtype, family, subtype, treq, portId, cntlid, asqsz, trsvcid, nqn, address, tsas, hostId,
                    symbolicName);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && trtype == e.trtype && adrfam == e.adrfam && subtype == e.subtype && treq == e.treq
                    && portId == e.portId && cntlid == e.cntlid && asqsz == e.asqsz && trsvcid.equals(e.trsvcid)
                    && nqn.equals(e.nqn) && traddr.equals(e.traddr) && Arrays.equals(tsas, e.tsas)
                    && Arrays.equals(hostId, e.hostId) && symbolicName.equals(e.symbolicName);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(trtype, adrfam, subtype, portId, trsvcid, nqn, traddr);
        }

        @Override
        public String toString() {
            return "Entry{trtype=" + trtype + " subtype=" + subtype + " traddr=" + traddr + " trsvcid=" + trsvcid + " nqn="
                    + nqn + (symbolicName.isEmpty() ? "" : " name=" + symbolicName) + "}";
        }

        int extendedLength() {
            int len = EXTENDED_ENTRY_FIXED;
            if (hostId != null) {
                len += 4 + 16;
            }
            if (!symbolicName.isEmpty()) {
                len += 4 + padded(symbolicName.length());
            }
            return len;
        }
    }

    /** Malformed discovery information: {@link #field} names what is wrong. */
    public static final class MalformedException extends Exception {
        private static final long serialVersionUID = 1L;
        public final String field;

        MalformedException(String field, String message) {
            super(field + ": " + message);
            this.field = field;
        }
    }

    /** TDL of what {@link #encode} writes. */
    public int totalLength() {
        int len = HEADER_SIZE;
        for (Entry e : entries) {
            len += e.extendedLength();
        }
        return len;
    }

    /** The command's data, in the extended format. */
    public ByteBuffer encode() {
        int tdl = totalLength();
        ByteBuffer b = ByteBuffer.allocate(tdl).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(TDL_OFFSET, tdl);
        b.putLong(NUMENT_OFFSET, entries.size());
        b.putShort(ENTFMT_OFFSET, (short) ENTFMT_EXTENDED);
        b.putShort(ETYPE_OFFSET, (short) entityType);
        b.putShort(EKTYPE_OFFSET, (short) EKTYPE);
        putText(b, EID_OFFSET, EID_LENGTH, entityId, "EID");
        putText(b, ENAME_OFFSET, ENAME_LENGTH, entityName, "ENAME");
        putText(b, EVER_OFFSET, EVER_LENGTH, entityVersion, "EVER");
        int at = HEADER_SIZE;
        DiscoveryLogEntry view = new DiscoveryLogEntry();
        for (Entry e : entries) {
            view.wrap(b, at);
            view.encode(e.trtype, e.adrfam, e.subtype, e.treq, e.portId, e.cntlid, e.asqsz, 0, e.trsvcid, e.nqn, e.traddr);
            view.tsas(e.tsas);
            int tel = e.extendedLength();
            b.putInt(at + TEL_OFFSET, tel);
            int numexat = 0;
            int x = at + EXTENDED_ENTRY_FIXED;
            if (e.hostId != null) {
                b.putShort(x, (short) EXAT_HOST_ID).putShort(x + 2, (short) 16).put(x + 4, e.hostId);
                x += 20;
                numexat++;
            }
            if (!e.symbolicName.isEmpty()) {
                int len = padded(e.symbolicName.length());
                b.putShort(x, (short) EXAT_SYMBOLIC_NAME).putShort(x + 2, (short) len);
                putText(b, x + 4, len, e.symbolicName, "symbolic name");
                x += 4 + len;
                numexat++;
            }
            b.putShort(at + NUMEXAT_OFFSET, (short) numexat);
            at += tel;
        }
        return b;
    }

    /**
     * Reads {@code length} bytes of DIM data at {@code b}'s position 0 (the command's data
     * length, which TDL must match), with at most {@code maxEntries} entries.
     */
    public static DiscoveryInformation parse(ByteBuffer data, int length, long maxEntries) throws MalformedException {
        ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (length < HEADER_SIZE || b.capacity() < length) {
            throw new MalformedException("TDL", "the data is " + length + " bytes, less than the " + HEADER_SIZE + "-byte header");
        }
        long tdl = Integer.toUnsignedLong(b.getInt(TDL_OFFSET));
        if (tdl != length) {
            throw new MalformedException("TDL", tdl + " is not the command's data length " + length);
        }
        int entfmt = Short.toUnsignedInt(b.getShort(ENTFMT_OFFSET));
        if (entfmt != ENTFMT_BASIC && entfmt != ENTFMT_EXTENDED) {
            throw new MalformedException("ENTFMT", "must be 1 (basic) or 2 (extended), not " + entfmt);
        }
        long nument = b.getLong(NUMENT_OFFSET);
        long fit = (length - HEADER_SIZE) / (entfmt == ENTFMT_BASIC ? DiscoveryLogEntry.SIZE : EXTENDED_ENTRY_FIXED);
        if (nument < 0 || nument > Math.min(fit, maxEntries)) {
            throw new MalformedException("NUMENT", Long.toUnsignedString(nument) + " entries, more than the "
                    + Math.min(fit, maxEntries) + " that fit TDL or are allowed");
        }
        int etype = Short.toUnsignedInt(b.getShort(ETYPE_OFFSET));
        if (etype < ETYPE_HOST || etype > ETYPE_CDC) {
            throw new MalformedException("ETYPE", "must be 1 (host), 2 (DDC) or 3 (CDC), not " + etype);
        }
        String eid = text(b, EID_OFFSET, EID_LENGTH, "EID");
        if (eid.isEmpty()) {
            throw new MalformedException("EID", "the entity's NQN is empty");
        }
        String ename = text(b, ENAME_OFFSET, ENAME_LENGTH, "ENAME");
        String ever = text(b, EVER_OFFSET, EVER_LENGTH, "EVER");
        List<Entry> entries = new ArrayList<>((int) nument);
        DiscoveryLogEntry view = new DiscoveryLogEntry();
        int at = HEADER_SIZE;
        for (int i = 0; i < nument; i++) {
            String where = "entry " + i;
            int fixed = entfmt == ENTFMT_BASIC ? DiscoveryLogEntry.SIZE : EXTENDED_ENTRY_FIXED;
            if (length - at < fixed) {
                throw new MalformedException(where, "does not fit the " + length + " bytes of data");
            }
            int tel = fixed;
            byte[] hostId = null;
            String symbolicName = "";
            if (entfmt == ENTFMT_EXTENDED) {
                long t = Integer.toUnsignedLong(b.getInt(at + TEL_OFFSET));
                if (t < fixed || t % 4 != 0 || t > length - at) {
                    throw new MalformedException(where + " TEL", t + " is below " + fixed + ", not a multiple of 4 or past TDL");
                }
                tel = (int) t;
                int numexat = Short.toUnsignedInt(b.getShort(at + NUMEXAT_OFFSET));
                int x = at + EXTENDED_ENTRY_FIXED;
                for (int k = 0; k < numexat; k++) {
                    String attr = where + " attribute " + k;
                    if (at + tel - x < 4) {
                        throw new MalformedException(attr, "does not fit TEL");
                    }
                    int type = Short.toUnsignedInt(b.getShort(x));
                    int len = Short.toUnsignedInt(b.getShort(x + 2));
                    if (len > at + tel - x - 4) {
                        throw new MalformedException(attr + " EXATLEN", len + " goes past TEL");
                    }
                    if (type == EXAT_HOST_ID) {
                        if (len != 16) {
                            throw new MalformedException(attr + " host identifier", "is " + len + " bytes, not 16");
                        }
                        hostId = new byte[16];
                        b.get(x + 4, hostId);
                    } else if (type == EXAT_SYMBOLIC_NAME) {
                        if (len > SYMBOLIC_NAME_MAX) {
                            throw new MalformedException(attr + " symbolic name", "is " + len + " bytes, more than "
                                    + SYMBOLIC_NAME_MAX);
                        }
                        symbolicName = text(b, x + 4, len, attr + " symbolic name");
                    }
                    // other attribute types are skipped, as the spec lets a reader do
                    x += 4 + padded(len);
                }
            }
            view.wrap(b, at);
            String trsvcid = text(b, at + DiscoveryLogEntry.TRSVCID_OFFSET, DiscoveryLogEntry.TRSVCID_LENGTH, where + " TRSVCID");
            String nqn = text(b, at + DiscoveryLogEntry.SUBNQN_OFFSET, 256, where + " NQN");
            String traddr = text(b, at + DiscoveryLogEntry.TRADDR_OFFSET, DiscoveryLogEntry.TRADDR_LENGTH, where + " TRADDR");
            entries.add(new Entry(view.trtype(), view.adrfam(), view.subtype(), view.treq(), view.portId(), view.cntlid(),
                    view.asqsz(), trsvcid, nqn, traddr, view.tsas(), hostId, symbolicName));
            at += tel;
        }
        return new DiscoveryInformation(etype, eid, ename, ever, entries);
    }

    private static int padded(int len) {
        return (len + 3) & ~3;
    }

    /** A NUL- or space-padded ASCII field; printable characters only. */
    private static String text(ByteBuffer b, int at, int len, String field) throws MalformedException {
        byte[] raw = new byte[len];
        b.get(at, raw);
        int end = len;
        while (end > 0 && (raw[end - 1] == 0 || raw[end - 1] == ' ')) {
            end--;
        }
        for (int i = 0; i < end; i++) {
            if (raw[i] < 0x20 || raw[i] > 0x7e) {
                throw new MalformedException(field, "byte " + i + " is not printable ASCII (0x"
                        + Integer.toHexString(raw[i] & 0xff) + ")");
            }
        }
        return new String(raw, 0, end, StandardCharsets.US_ASCII);
    }

    private static void putText(ByteBuffer b, int at, int len, String s, String field) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        if (bytes.length > len) {
            throw new IllegalArgumentException(field + " is longer than " + len + " bytes: " + s);
        }
        b.put(at, bytes);
    }
}
