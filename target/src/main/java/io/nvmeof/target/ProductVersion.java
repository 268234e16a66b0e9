package io.nvmeof.target;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The release this build is, as Maven's project version wrote it into {@code version.properties}
 * at build time. Identify Controller's Firmware Revision (FR, 8 ASCII bytes) comes from it, the
 * way Linux nvmet reports its kernel release there.
 */
public final class ProductVersion {
    /** The project's version, such as {@code 0.1.0}. */
    public static final String VERSION = load();
    /** Identify Controller FR: the version, cut to the field's 8 bytes. */
    public static final String FIRMWARE_REVISION = VERSION.length() <= 8 ? VERSION : VERSION.substring(0, 8);

    private ProductVersion() {
    }

    private static String load() {
        Properties p = new Properties();
        try (InputStream in = ProductVersion.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties is missing from the target library");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String v = p.getProperty("version", "");
        if (v.isEmpty() || v.startsWith("${")) {
            throw new IllegalStateException("version.properties was not filtered by the build: '" + v + "'");
        }
        return v;
    }
}
