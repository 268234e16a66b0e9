package io.nvmeof.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every tunable of the target is a row of the table, once (docs/reference/settings.md is made from it: ReferenceTest). */
class SettingsTableTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everySettingIsARowOnceWithAKeyAFlagAndAValidDefault() throws Exception {
        Set<Setting<?>> fields = new HashSet<>();
        for (Field f : Settings.class.getFields()) {
            if (Setting.class.isAssignableFrom(f.getType()) && Modifier.isStatic(f.getModifiers())) {
                fields.add((Setting<?>) f.get(null));
            }
        }
        assertEquals(fields, new HashSet<>(Settings.ALL), "a Setting constant outside Settings.ALL, or the reverse");
        Set<String> keys = new HashSet<>();
        for (Setting<?> s : Settings.ALL) {
            assertTrue(keys.add(s.key()), "key twice: " + s.key());
            assertTrue(s.key().matches("[a-z][a-z0-9_]*"), s.key());
            assertTrue(!s.help().isBlank() && !s.typeText().isBlank(), s.key());
            // the default is in range and reads back from its own text
            assertEquals(s.defaultValue(), s.parse(s.formatObject(s.defaultValue())), s.key());
        }
    }

    /** The target's options hold nothing but the rows' values (and the embedder's executor). */
    @Test
    void theTargetsOptionsAreTheTableAndNothingElse() {
        assertEquals(0, Target.Options.class.getFields().length, "a public field of Target.Options outside the table");
        List<String> state = new ArrayList<>();
        for (Field f : Target.Options.class.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                state.add(f.getName());
            }
        }
        assertEquals(List.of("values", "ioExecutor"), state);
    }

    /** No -D switch reaches the target: a system property that tunes it would be a setting outside the table. */
    @Test
    void theTargetReadsNoSystemProperties() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(ROOT.resolve("target/src/main/java"))) {
            for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                String text = Files.readString(p);
                for (String call : List.of("System.getProperty(", "Integer.getInteger(", "Long.getLong(",
                        "Boolean.getBoolean(")) {
                    if (text.contains(call)) {
                        found.add(ROOT.relativize(p) + ": " + call);
                    }
                }
            }
        }
        assertEquals(List.of(), found);
    }
}
