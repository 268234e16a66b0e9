package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 50 cut the README (2,054 lines) into pages. No section is lost: every heading the old
 * README had is a heading of the page that holds its text now, and that page is linked from the
 * README's map of documents (directly, or from a page the map links). And the relative links of
 * the pages that came out of it lead to files and headings that exist.
 */
class ReadmeMapTest {
    private static final Path ROOT = GuidePath.ROOT;

    /** Every heading of the README before issue 50, in its order, and the file that holds it now. */
    private static final String[][] OLD_HEADINGS = {
        {"nvmeof-java", "README.md"},
        {"Two commands", "README.md"},
        {"Using it", "docs/guide/target.md"},
        {"What one host may take, and what it sees at a limit", "docs/guide/target.md"},
        {"Settings", "docs/guide/target.md"},
        {"NVMe/RDMA", "docs/guide/target.md"},
        {"Providers", "docs/guide/target.md"},
        {"Security", "docs/guide/security.md"},
        {"Keys", "docs/guide/security.md"},
        {"Configuring hosts on the target", "docs/guide/security.md"},
        {"On the host", "docs/guide/security.md"},
        {"What is protected, and what is not", "docs/guide/security.md"},
        {"Metrics", "docs/guide/management.md"},
        {"Running the target as a service", "docs/guide/service.md"},
        {"RBD namespaces", "docs/guide/rbd.md"},
        {"Asymmetric Namespace Access", "docs/guide/gateways.md"},
        {"Gateways: several targets, one subsystem", "docs/guide/gateways.md"},
        {"Two gateways, one volume", "docs/guide/gateways.md"},
        {"Copy", "docs/guide/target.md"},
        {"Resize in place", "docs/guide/target.md"},
        {"QoS", "docs/guide/target.md"},
        {"Reservations", "docs/guide/target.md"},
        {"Management API", "docs/guide/management.md"},
        {"Testing an application: the embedded target", "docs/guide/embedded-target.md"},
        {"Layout", "docs/DESIGN.md"},
        {"Tests", "docs/testing.md"},
        {"Fuzzing", "docs/testing.md"},
        {"Performance", "docs/performance.md"},
        {"Polling by default", "docs/performance.md"},
        {"Files and block devices through the event loops: Linux AIO and io_uring", "docs/performance.md"},
        {"Hours of load, idle connections, and faults", "docs/performance.md"},
        {"What TLS costs", "docs/performance.md"},
        {"Status", "README.md"},
        {"Version and license", "README.md"},
    };

    /** The pages made from the old README, whose links this test checks. */
    private static final List<String> PAGES = List.of("README.md", "docs/DESIGN.md", "docs/testing.md",
            "docs/performance.md", "docs/guide/target.md", "docs/guide/initiator.md", "docs/guide/benchmarking.md",
            "docs/guide/embedded-target.md", "docs/guide/security.md", "docs/guide/service.md",
            "docs/guide/gateways.md", "docs/guide/rbd.md", "docs/guide/management.md");

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void everyOldHeadingIsOnAPageTheReadmeMapReaches() throws IOException {
        Set<String> reached = reachedFromReadme();
        List<String> lost = new ArrayList<>();
        for (String[] h : OLD_HEADINGS) {
            Path file = ROOT.resolve(h[1]);
            if (!Files.isRegularFile(file)) {
                lost.add(h[0] + ": " + h[1] + " does not exist");
            } else if (!headings(Files.readString(file)).contains(h[0])) {
                lost.add(h[0] + ": not a heading of " + h[1]);
            } else if (!reached.contains(h[1])) {
                lost.add(h[0] + ": " + h[1] + " is not linked from the README's map");
            }
        }
        assertEquals(List.of(), lost);
    }

    @Test
    void theLinksOfThePagesLeadToFilesAndHeadingsThatExist() throws IOException {
        List<String> broken = new ArrayList<>();
        for (String page : PAGES) {
            for (String link : links(page)) {
                String file = link.contains("#") ? link.substring(0, link.indexOf('#')) : link;
                String anchor = link.contains("#") ? link.substring(link.indexOf('#') + 1) : null;
                Path target = file.isEmpty() ? ROOT.resolve(page) : ROOT.resolve(page).getParent().resolve(file).normalize();
                if (!target.startsWith(ROOT) || !Files.exists(target)) {
                    broken.add(page + ": " + link + ": no such file");
                } else if (anchor != null && !headings(Files.readString(target)).stream()
                        .map(ReadmeMapTest::slug).toList().contains(anchor)) {
                    broken.add(page + ": " + link + ": no such heading");
                }
            }
        }
        assertEquals(List.of(), broken);
    }

    /** The Markdown files the README links, and those they link, and so on (paths from the root). */
    private static Set<String> reachedFromReadme() throws IOException {
        Set<String> seen = new LinkedHashSet<>(List.of("README.md"));
        Deque<String> todo = new ArrayDeque<>(seen);
        while (!todo.isEmpty()) {
            String page = todo.pop();
            for (String link : links(page)) {
                String file = link.contains("#") ? link.substring(0, link.indexOf('#')) : link;
                Path target = ROOT.resolve(page).getParent().resolve(file).normalize();
                if (file.endsWith(".md") && target.startsWith(ROOT) && Files.isRegularFile(target)) {
                    String rel = ROOT.relativize(target).toString();
                    if (seen.add(rel)) {
                        todo.add(rel);
                    }
                }
            }
        }
        return seen;
    }

    /** The page's relative links, outside code. */
    private static List<String> links(String page) throws IOException {
        String text = Files.readString(ROOT.resolve(page)).replaceAll("(?ms)^ *```.*?^ *```", "").replaceAll("`[^`]*`", "");
        List<String> out = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String l = m.group(1);
            if (!l.matches("[a-z]+:.*")) {
                out.add(l);
            }
        }
        return out;
    }

    /** The headings' texts, outside code blocks (where a line starting with # is a shell comment). */
    static List<String> headings(String markdown) {
        List<String> out = new ArrayList<>();
        boolean code = false;
        for (String line : markdown.split("\n")) {
            if (line.stripLeading().startsWith("```")) {
                code = !code;
            } else if (!code && line.matches("#{1,6} .*")) {
                out.add(line.replaceFirst("#+ ", "").strip());
            }
        }
        return out;
    }

    /** The anchor GitHub gives a heading. */
    static String slug(String heading) {
        return heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }
}
