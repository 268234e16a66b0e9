package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * nvmeof-bom is not a child of the parent (importing it must pin our libraries only), so what it
 * shares with the parent is written in both: this holds them equal. It names every library module
 * (those whose nvmeof.skipLibraryJars is false: the ones a release attaches sources and javadoc
 * to), and nothing else, at the parent's version; its url, licenses, developers and scm are the
 * parent's.
 */
class BomTest {
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

    @Test
    void theBomNamesEveryLibraryAtTheParentsVersion() throws IOException {
        String parent = Files.readString(Path.of("../pom.xml"));
        String bom = Files.readString(Path.of("../bom/pom.xml"));
        assertEquals(first(parent, "version"), first(bom, "version"), "the BOM's version is the parent's");
        List<String> libraries = new ArrayList<>();
        Matcher m = MODULE.matcher(parent);
        while (m.find()) {
            Path pom = Path.of("..", m.group(1), "pom.xml");
            String text = Files.readString(pom);
            if (text.contains("<nvmeof.skipLibraryJars>false</nvmeof.skipLibraryJars>")) {
                libraries.add(artifactId(text));
            }
        }
        assertFalse(libraries.isEmpty());
        List<String> named = new ArrayList<>();
        Matcher d = Pattern.compile("<artifactId>(nvmeof-[^<]+)</artifactId><version>\\$\\{project.version}</version>")
                .matcher(bom);
        while (d.find()) {
            named.add(d.group(1));
        }
        assertEquals(libraries, named, "the BOM names the library modules, in the reactor's order");
        for (String element : List.of("url", "licenses", "developers", "scm")) {
            assertEquals(block(parent, element), block(bom, element), "the BOM's " + element + " is the parent's");
        }
    }

    /** The module's own artifactId (the one after its parent block). */
    private static String artifactId(String pom) {
        int after = pom.indexOf("</parent>");
        return first(pom.substring(Math.max(0, after)), "artifactId");
    }

    private static String first(String xml, String element) {
        Matcher m = Pattern.compile("<" + element + ">([^<]*)</" + element + ">").matcher(xml);
        return m.find() ? m.group(1) : null;
    }

    /** The first {@code <element>...</element>}, whitespace between tags collapsed. */
    private static String block(String xml, String element) {
        int from = xml.indexOf("<" + element + ">");
        int to = xml.indexOf("</" + element + ">", from);
        return from < 0 || to < 0 ? null : xml.substring(from, to).replaceAll(">\\s+<", "><").strip();
    }
}
