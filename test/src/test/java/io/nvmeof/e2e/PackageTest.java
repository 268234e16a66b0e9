package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code mvn package} ships: the tarball unpacked anywhere runs (its launcher finds its
 * jar, the demo works), its man pages and completion are there and the completion is valid
 * bash; the Debian package holds the same files at their Debian paths with its control fields.
 * Installing the package under systemd is part 7 of the kernel interop suite.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PackageTest {
    static final Path BUILD = Path.of(System.getProperty("user.dir")).resolve("../packaging/build").normalize();

    @TempDir
    Path dir;

    static Path one(String glob) throws IOException {
        try (Stream<Path> s = Files.list(BUILD)) {
            List<Path> l = s.filter(p -> p.getFileSystem().getPathMatcher("glob:" + glob).matches(p.getFileName())).toList();
            assertEquals(1, l.size(), glob + " in " + BUILD + ": " + l);
            return l.get(0);
        }
    }

    static String run(Path cwd, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(90, TimeUnit.SECONDS), String.join(" ", cmd));
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ":\n" + out);
        return out;
    }

    @Test
    void theTarballRunsWhereverItIsUnpacked() throws Exception {
        Path tar = one("nvmeof-*.tar.gz");
        run(dir, "tar", "xzf", tar.toString());
        Path top;
        try (Stream<Path> s = Files.list(dir)) {
            top = s.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        assertTrue(top.getFileName().toString().startsWith("nvmeof-"), top.toString());
        for (String f : List.of("bin/nvmeof", "share/nvmeof/nvmeof.jar", "lib/systemd/system/nvmeof-target.service",
                "etc/nvmeof/target.conf", "etc/nvmeof/target.json", "share/man/man1/nvmeof.1.gz",
                "share/man/man1/nvmeof-bench.1.gz", "share/man/man1/nvmeof-target.1.gz",
                "share/bash-completion/completions/nvmeof")) {
            assertTrue(Files.exists(top.resolve(f)), f);
        }
        assertTrue(Files.isExecutable(top.resolve("bin/nvmeof")));
        String version = run(dir, top.resolve("bin/nvmeof").toString(), "--version");
        assertTrue(version.contains("nvmeof"), version);
        String demo = run(dir, top.resolve("bin/nvmeof").toString(), "demo", "--runtime", "0.5");
        assertTrue(demo.contains("target shut down cleanly"), demo);
        // the completion script is bash that defines the completion of nvmeof
        String complete = run(dir, "bash", "-c", "source " + top.resolve("share/bash-completion/completions/nvmeof")
                + " && complete -p nvmeof");
        assertTrue(complete.contains("nvmeof"), complete);
    }

    @Test
    void theDebianPackageHoldsTheSameAtDebianPaths() throws Exception {
        Path deb = one("nvmeof_*_all.deb");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/dpkg-deb")),
                "dpkg-deb is not installed here: the .deb's contents cannot be listed");
        String fields = run(dir, "dpkg-deb", "-f", deb.toString(), "Package", "Architecture", "Depends");
        assertTrue(fields.contains("Package: nvmeof") && fields.contains("Architecture: all"), fields);
        assertTrue(fields.contains("java17-runtime-headless"), fields);
        String files = run(dir, "dpkg-deb", "-c", deb.toString());
        for (String f : List.of("./usr/bin/nvmeof", "./usr/share/nvmeof/nvmeof.jar", "./lib/systemd/system/nvmeof-target.service",
                "./etc/nvmeof/target.json", "./usr/share/man/man1/nvmeof-top.1.gz",
                "./usr/share/bash-completion/completions/nvmeof")) {
            assertTrue(files.contains(f), f + " in\n" + files);
        }
        String conffiles = run(dir, "sh", "-c", "dpkg-deb --ctrl-tarfile " + deb + " | tar xO ./conffiles");
        assertTrue(conffiles.contains("/etc/nvmeof/target.json"), conffiles);
    }
}
