package io.nvmeof.protocol.tls;

/**
 * A TLS PSK identity of NVMe/TCP (3.6.1.3): {@code NVMe0R0X <hostnqn> <subnqn>} or
 * {@code NVMe1R0X <hostnqn> <subnqn> <digest>}, X the hash (1 SHA-256, 2 SHA-384).
 */
public record PskIdentity(String text, int version, int cipher, String hostNqn, String subNqn, String digest) {
    /** Parses an identity; null if it is not one of NVMe/TCP's. */
    public static PskIdentity parse(String text) {
        if (text.length() < 9 || !text.startsWith("NVMe") || text.charAt(5) != 'R' || text.charAt(8) != ' ') {
            return null;
        }
        int version = text.charAt(4) - '0';
        int cipher;
        try {
            cipher = Integer.parseInt(text.substring(6, 8));
        } catch (NumberFormatException e) {
            return null;
        }
        String[] parts = text.substring(9).split(" ", -1);
        if (version == 0 && parts.length == 2 || version == 1 && parts.length == 3) {
            if (cipher != 1 && cipher != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                return null;
            }
            return new PskIdentity(text, version, cipher, parts[0], parts[1], version == 1 ? parts[2] : null);
        }
        return null;
    }
}
