package io.nvmeof.protocol.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * The PSK offer of a TLS 1.3 ClientHello (RFC 8446, 4.2.11): its identities and binders, read
 * from the first record a client sends, so that a server can tell which of two candidate keys
 * a client holds before it answers: the binder is an HMAC over the ClientHello keyed from the
 * PSK, so exactly one candidate matches. Nothing else of the handshake is interpreted here.
 */
public final class ClientHelloPsk {
    private static final int EXT_PRE_SHARED_KEY = 41;
    private static final int EXT_PSK_KEY_EXCHANGE_MODES = 45;
    private static final int PSK_DHE_KE = 1;
    private final List<String> identities;
    private final List<byte[]> binders;
    private final byte[] truncated;
    private final boolean pskDheKe;

    private ClientHelloPsk(List<String> identities, List<byte[]> binders, byte[] truncated, boolean pskDheKe) {
        this.identities = identities;
        this.binders = binders;
        this.truncated = truncated;
        this.pskDheKe = pskDheKe;
    }

    /** Whether the host offers the PSK with an (EC)DHE exchange (psk_key_exchange_modes holds psk_dhe_ke, RFC 8446 4.2.9). */
    public boolean offersPskDheKe() {
        return pskDheKe;
    }

    public List<String> identities() {
        return identities;
    }

    /**
     * Reads the ClientHello in the TLS record at the start of {@code in} (not consumed); null if
     * the record is not a whole ClientHello with a pre_shared_key extension.
     */
    public static ClientHelloPsk parse(ByteBuffer in) {
        try {
            ByteBuffer b = in.duplicate().order(ByteOrder.BIG_ENDIAN);
            if (b.remaining() < 9 || (b.get() & 0xff) != 22) {
                return null;
            }
            b.getShort(); // legacy record version
            int recordLength = b.getShort() & 0xffff;
            if (b.remaining() < recordLength) {
                return null;
            }
            int hsStart = b.position();
            if ((b.get() & 0xff) != 1) {
                return null;
            }
            int hsLength = (b.get() & 0xff) << 16 | (b.getShort() & 0xffff);
            if (hsLength + 4 > recordLength) {
                return null; // fragmented over records: not handled
            }
            int hsEnd = hsStart + 4 + hsLength;
            b.position(b.position() + 2 + 32); // version, random
            skip(b, b.get() & 0xff); // session id
            skip(b, b.getShort() & 0xffff); // cipher suites
            skip(b, b.get() & 0xff); // compression methods
            int extEnd = (b.getShort() & 0xffff) + b.position();
            boolean dhe = false;
            while (b.position() + 4 <= Math.min(extEnd, hsEnd)) {
                int type = b.getShort() & 0xffff;
                int len = b.getShort() & 0xffff;
                if (type == EXT_PSK_KEY_EXCHANGE_MODES && len > 0) {
                    int at = b.position();
                    int n = b.get() & 0xff;
                    for (int i = 0; i < n && i + 1 < len; i++) {
                        dhe |= (b.get() & 0xff) == PSK_DHE_KE;
                    }
                    b.position(at + len);
                    continue;
                }
                if (type != EXT_PRE_SHARED_KEY) {
                    skip(b, len);
                    continue;
                }
                int idEnd = (b.getShort() & 0xffff) + b.position();
                List<String> ids = new ArrayList<>();
                while (b.position() < idEnd) {
                    byte[] id = new byte[b.getShort() & 0xffff];
                    b.get(id);
                    b.getInt(); // obfuscated ticket age
                    ids.add(new String(id, StandardCharsets.UTF_8));
                }
                int truncatedEnd = b.position();
                int bindersEnd = (b.getShort() & 0xffff) + b.position();
                List<byte[]> binders = new ArrayList<>();
                while (b.position() < bindersEnd) {
                    byte[] binder = new byte[b.get() & 0xff];
                    b.get(binder);
                    binders.add(binder);
                }
                if (binders.size() != ids.size()) {
                    return null;
                }
                byte[] truncated = new byte[truncatedEnd - hsStart];
                in.duplicate().position(hsStart).get(truncated);
                return new ClientHelloPsk(ids, binders, truncated, dhe);
            }
            return null;
        } catch (RuntimeException e) {
            return null; // malformed: the TLS library will say so
        }
    }

    private static void skip(ByteBuffer b, int n) {
        b.position(b.position() + n);
    }

    /** Whether the binder of identity {@code index} was made with {@code psk} (hash {@code h}). */
    public boolean binderMatches(int index, byte[] psk, DhchapHash h) {
        byte[] early = Hkdf.extract(h, psk);
        byte[] binderKey = Hkdf.expandLabel(h, early, "ext binder", h.digest(new byte[0]), h.length);
        byte[] finished = Hkdf.expandLabel(h, binderKey, "finished", new byte[0], h.length);
        byte[] binder = h.hmac(finished).doFinal(h.digest(truncated));
        return MessageDigest.isEqual(binder, binders.get(index));
    }
}
