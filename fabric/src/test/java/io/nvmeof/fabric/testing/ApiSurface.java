package io.nvmeof.fabric.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public API of a library, as the lines of a file kept beside it ({@code api/ARTIFACT.api}):
 * every public class and its public and protected constructors, methods and fields, with their
 * types. A test per library compares the build's API with the file, so that a change to what
 * applications compile against is seen in review: the file changes with it (write it with
 * {@code -Dnvmeof.writeApi=true}), and a removed or changed line is a break the CHANGELOG must
 * name. The file of release 0.1.0 is the API recorded at 0.1.0.
 */
public final class ApiSurface {
    private ApiSurface() {
    }

    /** The API lines of the classes in the jar or directory {@code anchor} was loaded from, sorted. */
    public static List<String> of(Class<?> anchor) throws IOException {
        Path where;
        try {
            where = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(where)) {
            try (Stream<Path> files = Files.walk(where)) {
                files.filter(p -> p.toString().endsWith(".class"))
                        .forEach(p -> names.add(where.relativize(p).toString()));
            }
        } else {
            try (JarFile jar = new JarFile(where.toFile())) {
                jar.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class")).forEach(names::add);
            }
        }
        TreeSet<String> lines = new TreeSet<>();
        for (String n : names) {
            if (n.endsWith("module-info.class") || n.endsWith("package-info.class")) {
                continue;
            }
            String className = n.substring(0, n.length() - 6).replace('/', '.').replace('\\', '.');
            Class<?> c;
            try {
                c = Class.forName(className, false, anchor.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                continue;
            }
            if (!visible(c)) {
                continue;
            }
            lines.add(describe(c));
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (api(c, k)) {
                    lines.add(c.getName() + " " + modifiers(k) + "<init>(" + params(k.getGenericParameterTypes()) + ")");
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                if (api(c, m) && !m.isSynthetic() && !m.isBridge()) {
                    lines.add(c.getName() + " " + modifiers(m) + m.getGenericReturnType().getTypeName() + " " + m.getName()
                            + "(" + params(m.getGenericParameterTypes()) + ")");
                }
            }
            for (Field f : c.getDeclaredFields()) {
                if (api(c, f) && !f.isSynthetic()) {
                    lines.add(c.getName() + " " + modifiers(f) + f.getGenericType().getTypeName() + " " + f.getName());
                }
            }
        }
        return new ArrayList<>(lines);
    }

    /**
     * Fails, showing the lines added and removed, when the API of {@code anchor}'s library
     * differs from {@code file} (relative to the module); writes the file instead with
     * {@code -Dnvmeof.writeApi=true}.
     */
    public static void check(Class<?> anchor, Path file) throws IOException {
        List<String> now = of(anchor);
        String text = String.join("\n", now) + "\n";
        if (Boolean.getBoolean("nvmeof.writeApi")) {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, text);
            return;
        }
        if (!Files.exists(file)) {
            fail(file + " is missing: write it with -Dnvmeof.writeApi=true");
        }
        List<String> recorded = Files.readAllLines(file);
        if (recorded.equals(now)) {
            return;
        }
        List<String> removed = recorded.stream().filter(l -> !now.contains(l)).collect(Collectors.toList());
        List<String> added = now.stream().filter(l -> !recorded.contains(l)).collect(Collectors.toList());
        fail("the public API differs from " + file + " (a removed or changed line breaks applications: name it in"
                + " CHANGELOG.md; then write the file with -Dnvmeof.writeApi=true)\nremoved:\n  "
                + String.join("\n  ", removed) + "\nadded:\n  " + String.join("\n  ", added));
    }

    private static boolean visible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass() || k.isSynthetic()) {
                return false;
            }
        }
        return true;
    }

    /** Public, or protected in a class an application may extend. */
    private static boolean api(Class<?> c, Member m) {
        int mod = m.getModifiers();
        return Modifier.isPublic(mod) || Modifier.isProtected(mod) && !Modifier.isFinal(c.getModifiers());
    }

    private static String describe(Class<?> c) {
        String kind = c.isAnnotation() ? "@interface" : c.isInterface() ? "interface" : c.isEnum() ? "enum"
                : c.isRecord() ? "record" : "class";
        StringBuilder b = new StringBuilder(c.getName()).append(" ")
                .append(Modifier.toString(c.getModifiers() & (Modifier.ABSTRACT | Modifier.FINAL | Modifier.STATIC)
                        & ~(c.isInterface() ? Modifier.ABSTRACT : 0)));
        if (b.charAt(b.length() - 1) != ' ') {
            b.append(' ');
        }
        b.append(kind);
        if (c.getGenericSuperclass() != null && c.getSuperclass() != Object.class && !c.isEnum() && !c.isRecord()) {
            b.append(" extends ").append(c.getGenericSuperclass().getTypeName());
        }
        if (c.getGenericInterfaces().length > 0) {
            b.append(c.isInterface() ? " extends " : " implements ").append(Arrays.stream(c.getGenericInterfaces())
                    .map(t -> t.getTypeName()).sorted().collect(Collectors.joining(", ")));
        }
        return b.toString();
    }

    private static String modifiers(Member m) {
        String s = Modifier.toString(m.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED | Modifier.STATIC
                | Modifier.FINAL | Modifier.ABSTRACT));
        return s.isEmpty() ? "" : s + " ";
    }

    private static String params(java.lang.reflect.Type[] types) {
        return Arrays.stream(types).map(java.lang.reflect.Type::getTypeName).collect(Collectors.joining(", "));
    }
}
