package io.nvmeof.protocol;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * NVMe Qualified Names (NVMe Base 2.0, 4.5): {@code nqn.yyyy-mm.reverse.domain:anything},
 * the UUID form {@code nqn.2014-08.org.nvmexpress:uuid:<uuid>}, at most 223 bytes of UTF-8.
 */
public final class Nqn {
    public static final int MAX_LENGTH = 223;
    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    public static final String UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";
    private static final Pattern DOMAIN_FORM =
            Pattern.compile("nqn\\.(19|20)\\d\\d-(0[1-9]|1[0-2])\\.[A-Za-z0-9][A-Za-z0-9.-]*(:.+)?");
    private static final Pattern UUID_FORM = Pattern.compile(
            Pattern.quote(UUID_PREFIX) + "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private Nqn() {
    }

    /** Returns null if {@code nqn} is valid, else a sentence that says why not. */
    public static String problem(String nqn) {
        String p = unusable(nqn);
        if (p != null) {
            return p;
        }
        if (nqn.startsWith(UUID_PREFIX)) {
            return UUID_FORM.matcher(nqn).matches() ? null : "NQN has a malformed UUID: " + nqn;
        }
        if (nqn.equals(DISCOVERY) || DOMAIN_FORM.matcher(nqn).matches()) {
            return null;
        }
        return "NQN must look like nqn.yyyy-mm.reverse.domain:name or " + UUID_PREFIX + "<uuid>: " + nqn;
    }

    /**
     * Null if {@code nqn} can name a host or subsystem at all: 1 to 223 bytes of UTF-8 and no
     * control character (what Linux nvmet takes, whatever the form); else why not. A name that
     * passes this but not {@link #problem} has an odd form, which nvmet accepts too.
     */
    public static String unusable(String nqn) {
        if (nqn == null || nqn.isEmpty()) {
            return "NQN is empty";
        }
        if (nqn.getBytes(StandardCharsets.UTF_8).length > MAX_LENGTH) {
            return "NQN is longer than " + MAX_LENGTH + " bytes";
        }
        for (int i = 0; i < nqn.length(); i++) {
            char c = nqn.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\ufffd' || Character.isISOControl(c)) {
                return "NQN has a control character or an undecodable byte at " + i + ": " + printable(nqn);
            }
        }
        return null;
    }

    /** {@code s} with control characters and undecodable bytes written as {@code \xNN}, fit for a log line. */
    public static String printable(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean bad = c < 0x20 || c == 0x7f || c == '\ufffd' || Character.isISOControl(c) || c == '\\';
            if (bad && b == null) {
                b = new StringBuilder(s.length() + 8).append(s, 0, i);
            }
            if (b != null) {
                if (!bad) {
                    b.append(c);
                } else if (c == '\\') {
                    b.append("\\\\");
                } else {
                    b.append(String.format("\\x%02x", c == '\ufffd' ? 0xff : (int) c & 0xff));
                }
            }
        }
        return b == null ? s : b.toString();
    }

    /** Throws {@link IllegalArgumentException} if {@code nqn} is not a valid NQN. */
    public static String require(String nqn) {
        String p = problem(nqn);
        if (p != null) {
            throw new IllegalArgumentException(p);
        }
        return nqn;
    }

    /**
     * Throws {@link IllegalArgumentException} if {@code name} cannot name a host or subsystem at
     * all ({@link #unusable}); a name of an odd form passes, as Linux nvmet takes it.
     */
    public static String requireUsable(String name) {
        String p = unusable(name);
        if (p != null) {
            throw new IllegalArgumentException(p);
        }
        return name;
    }

    public static String fromUuid(UUID uuid) {
        return UUID_PREFIX + uuid;
    }
}
