package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code mvn package} ships: the tarball unpacked anywhere runs (its launcher finds its
 * jar, the demo works), its man pages and completion are there and the completion is valid
 * bash; the Debian package holds the same files at their Debian paths with its control fields;
 * all of them say the release's version and carry its license.
 * Installing the package under systemd is part 7 of the kernel interop suite.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PackageTest {
    static final Path BUILD = Path.of(System.getProperty("user.dir")).resolve("../packaging/build").normalize();
    static final Path TOP = BUILD.resolve("../..").normalize();
    /** The release, as Maven's project version: the packages, the jar and --version must all say it. */
    static final String VERSION = System.getProperty("project.version");

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
        assertEquals("nvmeof-" + VERSION, top.getFileName().toString());
        for (String f : List.of("LICENSE", "NOTICE", "CHANGELOG.md", "bin/nvmeof", "share/nvmeof/nvmeof.jar", "lib/systemd/system/nvmeof-target.service",
                "etc/nvmeof/target.conf", "etc/nvmeof/target.json", "share/man/man1/nvmeof.1.gz",
                "share/man/man1/nvmeof-bench.1.gz", "share/man/man1/nvmeof-target.1.gz",
                "share/bash-completion/completions/nvmeof")) {
            assertTrue(Files.exists(top.resolve(f)), f);
        }
        assertTrue(Files.isExecutable(top.resolve("bin/nvmeof")));
        String version = run(dir, top.resolve("bin/nvmeof").toString(), "--version");
        assertTrue(version.startsWith("nvmeof " + VERSION + " (Java "), version);
        assertEquals(Files.readString(TOP.resolve("LICENSE")), Files.readString(top.resolve("LICENSE")));
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
        String fields = run(dir, "dpkg-deb", "-f", deb.toString(), "Package", "Version", "Architecture", "Depends");
        assertTrue(fields.contains("Package: nvmeof") && fields.contains("Architecture: all"), fields);
        assertTrue(fields.contains("Version: " + VERSION + "\n"), "a release, no snapshot: " + fields);
        assertEquals("nvmeof_" + VERSION + "_all.deb", deb.getFileName().toString());
        assertTrue(fields.contains("java17-runtime-headless"), fields);
        String files = run(dir, "dpkg-deb", "-c", deb.toString());
        for (String f : List.of("./usr/bin/nvmeof", "./usr/share/nvmeof/nvmeof.jar", "./lib/systemd/system/nvmeof-target.service",
                "./etc/nvmeof/target.json", "./usr/share/man/man1/nvmeof-top.1.gz",
                "./usr/share/bash-completion/completions/nvmeof", "./usr/share/doc/nvmeof/copyright",
                "./usr/share/doc/nvmeof/NOTICE", "./usr/share/doc/nvmeof/changelog.gz")) {
            assertTrue(files.contains(f), f + " in\n" + files);
        }
        String conffiles = run(dir, "sh", "-c", "dpkg-deb --ctrl-tarfile " + deb + " | tar xO ./conffiles");
        assertTrue(conffiles.contains("/etc/nvmeof/target.json"), conffiles);
        run(dir, "sh", "-c", "dpkg-deb -x " + deb + " x");
        String copyright = Files.readString(dir.resolve("x/usr/share/doc/nvmeof/copyright"));
        assertTrue(copyright.contains("Files: *\nCopyright: 2026 the nvmeof-java developers\nLicense: Apache-2.0\n"), copyright);
        String changelog = run(dir, "sh", "-c", "gzip -dc x/usr/share/doc/nvmeof/changelog.gz | head -1");
        assertTrue(changelog.startsWith("nvmeof (" + VERSION + ") "), "the changelog's newest entry is this release: " + changelog);
    }

    /**
     * The shaded jar: the project's license, one NOTICE that merges every bundled library's, a
     * list of every bundled artifact with its license, and a license text for each library that
     * is not under the Apache License (whose text is the jar's own META-INF/LICENSE).
     */
    @Test
    void theJarCarriesTheLicensesAndNoticesOfWhatItBundles() throws Exception {
        try (ZipFile jar = new ZipFile(TargetProcess.JAR.toFile())) {
            assertEquals(Files.readString(TOP.resolve("LICENSE")), entry(jar, "META-INF/LICENSE"));
            String notice = entry(jar, "META-INF/NOTICE");
            assertTrue(notice.startsWith("\nnvmeof-java\nCopyright 2026 the nvmeof-java developers\n"), notice);
            for (String bundled : List.of("Jackson JSON processor", "Apache Batik", "Apache XML Graphics Commons",
                    "The Prometheus Authors", "Apache Commons RNG", "FastDoubleParser")) {
                assertTrue(notice.contains(bundled), bundled + "'s notice in\n" + notice);
            }
            Set<String> dirs = new TreeSet<>();
            jar.stream().map(ZipEntry::getName).filter(n -> n.startsWith("META-INF/licenses/") && n.endsWith("/")
                    && n.chars().filter(c -> c == '/').count() == 3).forEach(n -> dirs.add(n.split("/")[2]));
            List<String> thirdParty = entry(jar, "META-INF/THIRD-PARTY.txt").lines()
                    .filter(l -> l.startsWith("     (")).toList();
            assertTrue(thirdParty.size() > 40, "every bundled artifact is listed: " + thirdParty);
            for (String artifact : List.of("io.netty:netty-transport:", "org.bouncycastle:bctls-jdk18on:", "org.ow2.asm:asm:",
                    "com.fasterxml.jackson.core:jackson-databind:", "info.picocli:picocli:", "org.hdrhistogram:HdrHistogram:")) {
                assertTrue(thirdParty.stream().anyMatch(l -> l.contains("(" + artifact)), artifact + " in " + thirdParty);
            }
            for (String line : thirdParty) {
                if (line.contains("(Apache-2.0)")) {
                    continue; // the jar's own META-INF/LICENSE is the text
                }
                String[] gav = line.substring(line.lastIndexOf(" (") + 2).split(" ")[0].split(":");
                assertTrue(dirs.stream().anyMatch(d -> d.equals(gav[1] + "-jar") || gav[1].startsWith(d) || gav[0].contains(d)),
                        "a license text for " + line + " under META-INF/licenses/: " + dirs);
            }
            assertTrue(jar.stream().noneMatch(e -> e.getName().startsWith("org/junit/")), "test libraries are not bundled");
        }
    }

    static String entry(ZipFile jar, String name) throws IOException {
        ZipEntry e = jar.getEntry(name);
        assertTrue(e != null, name + " in the jar");
        try (InputStream in = jar.getInputStream(e)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
