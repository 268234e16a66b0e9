package io.nvmeof.daemon.config;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A configuration object's schema: its {@link Field} rows, one per component of the record {@code
 * R} it reads into, and the checks that span fields. From the rows alone come the JSON reader
 * (unknown keys and bad values named by their path), the writer (what the reader reads back as the
 * same record), the diff a reload applies row by row, and the object's reference table. Building a
 * schema fails unless every record component has exactly one row, so the record and its rows
 * cannot drift apart.
 */
public final class ObjectSchema<R extends Record> {
    /** A check across fields of a read object: throws a {@link ConfigException} naming the field. */
    @FunctionalInterface
    public interface Check<R> {
        /** {@code r} as read from {@code node} at {@code at}. */
        void check(R r, String at, JsonNode node);
    }

    /** The values of an object's fields by key, as a default or a check sees them. */
    @FunctionalInterface
    public interface Values {
        /** The value of the field {@code key}: as given, else its default. */
        Object get(String key);
    }

    /** A field whose value differs between two versions of an object, and how that change applies. */
    public record Change(Field<?> field, Object before, Object after) {
        public Field.Apply apply() {
            return field.apply();
        }

        @Override
        public String toString() {
            return field.key() + " " + before + " -> " + after;
        }
    }

    private final String name;
    private final String help;
    private final List<Field<?>> fields;
    private final Map<String, Field<?>> byKey = new LinkedHashMap<>();
    private final Set<String> ignored;
    private final List<Check<R>> checks;
    private final Constructor<R> constructor;
    private final Map<String, Method> accessors = new HashMap<>();
    private final List<String> order = new ArrayList<>();

    /**
     * The schema of {@code type}, called {@code name} in the reference: {@code fields} in the order
     * the reference and the writer give them, {@code ignored} keys taken and left unread (another
     * format's), {@code checks} run on every object read.
     */
    public ObjectSchema(String name, String help, Class<R> type, List<Field<?>> fields, Set<String> ignored,
                        List<Check<R>> checks) {
        this.name = name;
        this.help = help;
        this.fields = List.copyOf(fields);
        this.ignored = Set.copyOf(ignored);
        this.checks = List.copyOf(checks);
        Map<String, Field<?>> byComponent = new HashMap<>();
        for (Field<?> f : fields) {
            if (byKey.put(f.key(), f) != null || byComponent.put(f.component(), f) != null) {
                throw new IllegalStateException(name + ": " + f.key() + " is a row twice");
            }
        }
        RecordComponent[] components = type.getRecordComponents();
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            RecordComponent c = components[i];
            if (!byComponent.containsKey(c.getName())) {
                throw new IllegalStateException(name + ": no row fills " + type.getSimpleName() + "." + c.getName());
            }
            types[i] = c.getType();
            accessors.put(c.getName(), c.getAccessor());
            order.add(c.getName());
        }
        if (byComponent.size() != components.length) {
            throw new IllegalStateException(name + ": a row names no component of " + type.getSimpleName());
        }
        try {
            this.constructor = type.getDeclaredConstructor(types);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    public String name() {
        return name;
    }

    public List<Field<?>> fields() {
        return fields;
    }

    /** The keys it takes, its rows' (a spread row's, each of its keys) and the ignored ones. */
    public List<String> keys() {
        List<String> l = new ArrayList<>();
        for (Field<?> f : fields) {
            if (f.codec() instanceof Codec.Spread<?> sp) {
                l.addAll(sp.keys());
            } else {
                l.add(f.key());
            }
        }
        l.addAll(ignored.stream().sorted().toList());
        return l;
    }

    /** The row of {@code key}, or null. */
    public Field<?> field(String key) {
        return byKey.get(key);
    }

    /** Refuses any key of {@code node} outside {@code known}, naming it at {@code at}. */
    public static void known(JsonNode node, String at, List<String> known) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw new ConfigException((at.isEmpty() ? "" : at + ".") + fieldName(f), "unknown field (known: "
                        + String.join(", ", known) + ")");
            }
        }
    }

    /** A field name as an error shows it: as it is when it is a plain name, else quoted as in JSON ({@code ""}). */
    static String fieldName(String f) {
        return f.matches("[A-Za-z_][A-Za-z0-9_]*") ? f
                : "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(f)) + "\"";
    }

    /** {@code n}, found at {@code at}, if it is a JSON object; else the error that says it must be one. */
    static JsonNode object(JsonNode n, String at) {
        if (n == null || !n.isObject()) {
            throw new ConfigException(at, "must be an object");
        }
        return n;
    }

    /** The object in {@code node}, found at {@code at}. */
    public R read(JsonNode node, String at, Codec.Reading reading) {
        known(object(node, at), at, keys());
        Map<String, Object> given = new HashMap<>();
        for (Field<?> f : fields) {
            Object value;
            if (f.codec() instanceof Codec.Spread<?> sp) {
                value = sp.readFrom(node, at, reading);
            } else {
                JsonNode v = node.get(f.key());
                value = v == null ? null : f.codec().read(v, at + "." + f.key(), reading);
            }
            if (value != null) {
                given.put(f.key(), value);
            }
        }
        Map<String, Object> all = new HashMap<>(given);
        Values values = new Values() {
            @Override
            public Object get(String key) {
                if (all.containsKey(key)) {
                    return all.get(key);
                }
                Field<?> f = byKey.get(key);
                if (f.isRequired()) {
                    throw new ConfigException(at + "." + key, f.missing());
                }
                all.put(key, null); // a default that asks for itself reads null
                Object d = f.dflt().apply(this);
                all.put(key, d);
                return d;
            }
        };
        Object[] args = new Object[order.size()];
        for (Field<?> f : fields) {
            args[order.indexOf(f.component())] = values.get(f.key());
        }
        R r = construct(args, at);
        for (Check<R> c : checks) {
            c.check(r, at, node);
        }
        return r;
    }

    private R construct(Object[] args, String at) {
        try {
            return constructor.newInstance(args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(at, e);
        }
    }

    /** The value of {@code f} in {@code r}. */
    public Object get(R r, Field<?> f) {
        try {
            return accessors.get(f.component()).invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code r} as JSON, as {@link #read} reads it back: a value at its default is left out unless its row says. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public ObjectNode write(R r) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        Values values = key -> get(r, byKey.get(key));
        for (Field<?> f : fields) {
            Object v = get(r, f);
            if (v == null || !f.writeDefault() && !f.isRequired() && Objects.equals(v, ((Field) f).dflt().apply(values))) {
                continue;
            }
            JsonNode w = ((Codec) f.codec()).write(v);
            if (f.codec() instanceof Codec.Spread<?>) {
                n.setAll((ObjectNode) w);
            } else {
                n.set(f.key(), w);
            }
        }
        return n;
    }

    /** The fields whose values differ from {@code before} to {@code after}, in row order. */
    public List<Change> changes(R before, R after) {
        List<Change> l = new ArrayList<>();
        for (Field<?> f : fields) {
            Object a = get(before, f);
            Object b = get(after, f);
            if (!Objects.equals(a, b)) {
                l.add(new Change(f, a, b));
            }
        }
        return l;
    }

    /**
     * Gives the running object {@code live} each value of {@code r} whose row has a {@link
     * Field.Live} and that it does not hold yet; what each change log line says, in row order.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <L> List<String> applyLive(R r, L live) {
        List<String> said = new ArrayList<>();
        for (Field<?> f : fields) {
            Field.Live l = f.live();
            Object v = get(r, f);
            if (l != null && !l.holds(live, v)) {
                l.set(live, v);
                said.add(l.said(live, v));
            }
        }
        return said;
    }

    /** Whether {@code a} and {@code b} differ in no field whose change applies as one of {@code kinds}. */
    public boolean sameIn(R a, R b, Set<Field.Apply> kinds) {
        return changes(a, b).stream().noneMatch(c -> kinds.contains(c.apply()));
    }

    /** The object's reference: its help, then a table of its rows. */
    public String reference() {
        StringBuilder b = new StringBuilder();
        b.append("## `").append(name).append("`\n\n").append(help).append("\n\n");
        b.append("| Key | Takes | Default | A change | What it is |\n|---|---|---|---|---|\n");
        for (Field<?> f : fields) {
            if (f.codec() instanceof Codec.Spread<?> sp) {
                for (String[] row : sp.rows(f.help())) {
                    b.append("| `").append(row[0]).append("` | ").append(row[1]).append(" | none | ")
                            .append(f.apply().text()).append(" | ").append(row[2]).append(" |\n");
                }
                continue;
            }
            b.append("| `").append(f.key()).append("` | ").append(f.codec().type()).append(" | ")
                    .append(f.defaultText()).append(" | ").append(f.apply().text())
                    .append(" | ").append(f.help()).append(" |\n");
        }
        if (!ignored.isEmpty()) {
            b.append("\nTaken and ignored: ").append(String.join(", ", ignored.stream().sorted().map(k -> "`" + k + "`")
                    .toList())).append(".\n");
        }
        return b.toString();
    }
}
