package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A loop device over an image file, for tests of block backends: {@code losetup} as root. Where
 * there are none (not root) the test is skipped, except in CI, where that is a failure.
 */
public final class LoopDevice implements AutoCloseable {
    public final Path path;

    private LoopDevice(Path path) {
        this.path = path;
    }

    /** Attaches {@code image} with 4 KiB logical blocks. */
    public static LoopDevice attach(Path image) throws IOException, InterruptedException {
        Process setup = new ProcessBuilder("losetup", "-f", "--show", "-b", "4096", image.toString()).start();
        String dev = new String(setup.getInputStream().readAllBytes()).trim();
        boolean ok = setup.waitFor(10, TimeUnit.SECONDS) && setup.exitValue() == 0 && dev.startsWith("/dev/loop");
        if (System.getenv("CI") == null) {
            assumeTrue(ok, "no loop devices here (needs root)");
        }
        assertTrue(ok, "losetup failed");
        return new LoopDevice(Path.of(dev));
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder("losetup", "-d", path.toString()).start().waitFor(10, TimeUnit.SECONDS);
    }
}
