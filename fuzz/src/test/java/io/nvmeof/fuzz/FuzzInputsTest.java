package io.nvmeof.fuzz;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every fuzz test of this module has its saved inputs (seeds and past findings) where Jazzer
 * replays them from: {@code <Class>Inputs/<method>/} beside the class, with at least one input.
 * A fuzz test moved to another package without its corpus fails here, not silently.
 */
class FuzzInputsTest {
    @Test
    void everyFuzzTestHasItsInputsWhereJazzerLooks() throws IOException, URISyntaxException, ClassNotFoundException {
        Path classes = Path.of(FuzzInputsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> names = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes)) {
            files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().contains("$"))
                    .forEach(p -> names.add(classes.relativize(p).toString().replace('/', '.').replaceAll("\\.class$", "")));
        }
        List<String> fuzzTests = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String name : names) {
            Class<?> c = Class.forName(name, false, FuzzInputsTest.class.getClassLoader());
            for (Method m : c.getDeclaredMethods()) {
                if (m.isAnnotationPresent(FuzzTest.class)) {
                    fuzzTests.add(name + "." + m.getName());
                    if (FuzzRuns.inputCount(c.getResource(c.getSimpleName() + "Inputs/" + m.getName())) == 0) {
                        missing.add(c.getPackageName().replace('.', '/') + "/" + c.getSimpleName() + "Inputs/" + m.getName());
                    }
                }
            }
        }
        assertFalse(fuzzTests.isEmpty(), "no fuzz test found under " + classes);
        assertTrue(missing.isEmpty(), "fuzz tests whose saved inputs Jazzer does not find (no folder, or empty): " + missing);
    }
}
