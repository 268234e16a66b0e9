package io.nvmeof.daemon.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/** The codecs of the configuration's fields: each reads, checks and writes one kind of value. */
public final class Codecs {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());

    private Codecs() {
    }

    /** A codec from its parts, of a plain value. */
    static <T> Codec<T> of(String type, Reader<T> read, Function<T, JsonNode> write) {
        return of(Codec.Shape.VALUE, type, read, write);
    }

    /** A codec from its parts. */
    static <T> Codec<T> of(Codec.Shape shape, String type, Reader<T> read, Function<T, JsonNode> write) {
        return new Codec<>() {
            @Override
            public Shape shape() {
                return shape;
            }

            @Override
            public T read(JsonNode n, String at, Reading reading) {
                return read.read(n, at, reading);
            }

            @Override
            public JsonNode write(T v) {
                return write.apply(v);
            }

            @Override
            public String type() {
                return type;
            }
        };
    }

    /** The reading half of a codec. */
    @FunctionalInterface
    interface Reader<T> {
        T read(JsonNode n, String at, Codec.Reading reading);
    }

    /** Text; JSON null reads as absent. */
    public static final Codec<String> STRING = of("string", (n, at, r) -> {
        if (n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw new ConfigException(at, "must be a string, got " + n);
        }
        return n.asText();
    }, JSON::textNode);

    /** The text of {@code parent.field} ({@link #STRING}; at {@code at.field}), or {@code dflt} where it is absent or null. */
    static String text(JsonNode parent, String field, String at, String dflt) {
        JsonNode n = parent.get(field);
        String v = n == null ? null : STRING.read(n, at + "." + field, Codec.Reading.NONE);
        return v == null ? dflt : v;
    }

    public static final Codec<Boolean> BOOLEAN = of(Codec.Shape.BOOLEAN, "`true` or `false`", (n, at, r) -> {
        if (!n.isBoolean()) {
            throw new ConfigException(at, "must be true or false, got " + n);
        }
        return n.asBoolean();
    }, JSON::booleanNode);

    /** A flag: {@code true} or {@code false}, or nvmetcli's {@code 1} and {@code 0}; written as a boolean. */
    public static final Codec<Boolean> FLAG = of(Codec.Shape.BOOLEAN, "`true` or `false` (or `1`, `0`)", (n, at, r) -> {
        if (n.isBoolean()) {
            return n.asBoolean();
        }
        if (n.isIntegralNumber() && (n.asInt() == 0 || n.asInt() == 1) || n.isTextual() && n.asText().matches("[01]")) {
            return n.asInt() == 1 || n.asText().equals("1");
        }
        throw new ConfigException(at, "must be true or false (or 1 or 0), got " + n);
    }, JSON::booleanNode);

    /**
     * A subsystem or host name: an NQN, or, as Linux nvmet takes any name (blktests names its
     * subsystems {@code blktests-subsystem-N}), a name of another form with a warning; never one
     * that is empty, longer than 223 bytes or holds a control character.
     */
    public static final Codec<String> NQN = of("an NQN", Codecs::nqn, JSON::textNode);

    static String nqn(JsonNode n, String at, Codec.Reading r) {
        if (n == null || !n.isTextual()) {
            throw new ConfigException(at, "must be an NQN string" + (n == null ? " (missing)" : ", got " + n));
        }
        String v = n.asText();
        String unusable = Nqn.unusable(v);
        if (unusable != null) {
            throw new ConfigException(at, unusable);
        }
        String odd = Nqn.problem(v);
        if (odd != null) {
            LOG.log(System.Logger.Level.WARNING, "{0}: {1}; taken as it is, as Linux nvmet takes it", at, odd);
        }
        return v;
    }

    /** A namespace ID, 1..4294967294 (held as an unsigned int). */
    public static final Codec<Integer> NSID = of("a number 1..4294967294", Codecs::nsid,
            v -> JSON.numberNode(Integer.toUnsignedLong(v)));

    static int nsid(JsonNode n, String at, Codec.Reading r) {
        if (n == null || !n.canConvertToLong()) {
            throw new ConfigException(at, "must be a number 1..4294967294" + (n == null ? " (missing)" : ", got " + n));
        }
        long v = n.asLong();
        if (v < 1 || v > 0xfffffffeL) {
            throw new ConfigException(at, "must be 1..4294967294, got " + v);
        }
        return (int) v;
    }

    /** A positive size: bytes, or text like {@code "64M"}. */
    public static final Codec<Long> SIZE = of("a size: bytes, or text like `64M` or `1G`", (n, at, r) -> size(n, at),
            JSON::numberNode);

    static long size(JsonNode n, String at) {
        if (n.canConvertToLong() && n.isIntegralNumber()) {
            long v = n.asLong();
            if (v <= 0) {
                throw new ConfigException(at, "must be positive, got " + v);
            }
            return v;
        }
        if (n.isTextual()) {
            try {
                return Sizes.parse(n.asText(), "size");
            } catch (IllegalArgumentException e) {
                throw new ConfigException(at, "'" + n.asText() + "' is not a size like 4096, 64k, 256M or 1G");
            }
        }
        throw new ConfigException(at, "must be a size (bytes, or text like \"1G\"), got " + n);
    }

    /** A logical block size: 512 or 4096 (as a size). */
    public static final Codec<Integer> BLOCK_SIZE = of("`512` or `4096`", (n, at, r) -> {
        long bs = size(n, at);
        if (bs != 512 && bs != 4096) {
            throw new ConfigException(at, "must be 512 or 4096, got " + bs);
        }
        return (int) bs;
    }, JSON::numberNode);

    public static final Codec<UUID> UUID_CODEC = of("a UUID", (n, at, r) -> {
        try {
            return UUID.fromString(n.asText());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(at, "'" + n.asText() + "' is not a UUID");
        }
    }, v -> JSON.textNode(v.toString()));

    /** A 24-bit IEEE OUI: text in hex ({@code "0x0025b5"} or {@code "0025b5"}) or a number. */
    public static final Codec<Integer> OUI = of("a 24-bit IEEE OUI like `\"0x0025b5\"`", (n, at, r) -> {
        try {
            String t = n.asText().trim().toLowerCase();
            int v = t.startsWith("0x") ? Integer.parseInt(t.substring(2), 16) : n.isNumber() ? n.asInt()
                    : Integer.parseInt(t, 16);
            if (v < 0 || v > 0xffffff) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new ConfigException(at, "'" + n.asText() + "' is not a 24-bit IEEE OUI like \"0x0025b5\"");
        }
    }, v -> JSON.textNode(String.format("0x%06x", v)));

    /** One of {@code values}; {@code what} names them in an error. */
    public static Codec<String> oneOf(List<String> values) {
        String list = String.join(", ", values);
        return of("one of " + String.join(", ", values.stream().map(v -> "`" + v + "`").toList()), (n, at, r) -> {
            String v = STRING.read(n, at, r);
            if (v != null && !values.contains(v)) {
                throw new ConfigException(at, "'" + v + "' is not one of " + list);
            }
            return v;
        }, JSON::textNode);
    }

    /**
     * A whole number {@code min..max}; text holding one is taken too (nvmetcli writes numbers as
     * text), and empty text as absent.
     */
    public static Codec<Integer> range(int min, int max) {
        return of("a number " + min + ".." + max, (n, at, r) -> {
            JsonNode v = n;
            if (n.isTextual() && n.asText().isBlank()) {
                return null; // nvmetcli leaves an attribute empty for its default
            }
            if (n.isTextual()) {
                try {
                    v = JSON.numberNode(Integer.parseInt(n.asText().trim()));
                } catch (NumberFormatException e) {
                    throw new ConfigException(at, "must be a number " + min + ".." + max + ", got " + n);
                }
            }
            if (!v.canConvertToInt() || !v.isIntegralNumber()) {
                throw new ConfigException(at, "must be a number " + min + ".." + max + ", got " + n);
            }
            int i = v.asInt();
            if (i < min || i > max) {
                throw new ConfigException(at, "must be " + min + ".." + max + ", got " + i);
            }
            return i;
        }, JSON::numberNode);
    }

    /** A limit: a whole number, 0 for none, else at least {@code min}; {@code scale} bytes a unit. */
    public static Codec<Long> limit(long min, int shift, String unit) {
        return of("a whole number of " + unit + ", at least " + min + " (`0`: no limit)", (n, at, r) -> {
            if (!n.isIntegralNumber() || n.asLong() < 0) {
                throw new ConfigException(at, "must be a whole number, 0 for no limit, got " + n);
            }
            long v = n.asLong();
            if (v != 0 && v < min) {
                throw new ConfigException(at, "must be 0 (no limit) or at least " + min + ", got " + v);
            }
            return v << shift;
        }, v -> JSON.numberNode(v >> shift));
    }

    /** An absolute path, as written. */
    public static final Codec<Path> ABSOLUTE_PATH = of("an absolute path", (n, at, r) -> Path.of(absolute(n, at)),
            v -> JSON.textNode(v.toString()));

    static String absolute(JsonNode n, String at) {
        if (n == null || !n.isTextual() || !n.asText().startsWith("/")) {
            throw new ConfigException(at, "must be an absolute path, got " + n);
        }
        return n.asText();
    }

    /** An absolute path to a directory, with {@code .} and {@code ..} taken out as written (the operator's own). */
    public static final Codec<Path> DIRECTORY = of("an absolute path", (n, at, r) -> Path.of(absolute(n, at)).normalize(),
            v -> JSON.textNode(v.toString()));

    /** A path: a relative one is taken next to the configuration file. */
    public static final Codec<Path> PATH = of("a path (a relative one is next to the configuration)", (n, at, r) -> {
        String s = STRING.read(n, at, r);
        return s == null ? null : r.resolve(s);
    }, v -> JSON.textNode(v.toString()));

    /** A user or group name. */
    public static final Codec<String> PLAIN_NAME = name("a user or group name");

    /** A Ceph pool, image or cluster name as the configuration takes it. */
    public static final Codec<String> CEPH_NAME = name("a name of letters, digits, `_`, `.` and `-`");

    /** A name of letters, digits, {@code _}, {@code .} and {@code -} (not first); {@code what} says what it is. */
    static Codec<String> name(String what) {
        return of(what, (n, at, r) -> {
            if (n == null || !n.isTextual() || !n.asText().matches("[A-Za-z0-9_][A-Za-z0-9_.-]*")) {
                throw new ConfigException(at, "must be " + what.replace("`", "") + ", got " + n);
            }
            return n.asText();
        }, JSON::textNode);
    }

    /**
     * A name from a set that {@code named} looks up (null: not one), written as {@code name} gives
     * it; {@code names} says them in the reference and in an error.
     */
    static <T> Codec<T> named(String names, Function<String, T> named, Function<T, String> name) {
        return of(names, (n, at, r) -> {
            T v = n.isTextual() ? named.apply(n.asText()) : null;
            if (v == null) {
                throw new ConfigException(at, "must be " + names.replace("`", "") + ", got " + n);
            }
            return v;
        }, v -> JSON.textNode(name.apply(v)));
    }

    /** A DH-HMAC-CHAP hash, as nvmet and nvme-cli name them ({@code sha256}, {@code hmac(sha256)}). */
    public static final Codec<DhchapHash> HASH = named("`sha256`, `sha384` or `sha512`",
            DhchapHash::named, DhchapHash::shortName);

    /** A DH group of DH-HMAC-CHAP, as nvmet names them. */
    public static final Codec<DhGroup> DH_GROUP = named(
            "`null`, `ffdhe2048`, `ffdhe3072`, `ffdhe4096`, `ffdhe6144` or `ffdhe8192`",
            DhGroup::named, g -> g.kernelName);

    /** An array of {@code item}s; each item's errors name its index. */
    public static <T> Codec<List<T>> list(Codec<T> item) {
        return of(Codec.Shape.LIST, "a list, each " + item.type(), (n, at, r) -> {
            if (!n.isArray()) {
                throw new ConfigException(at, "must be an array");
            }
            List<T> out = new ArrayList<>();
            for (int i = 0; i < n.size(); i++) {
                out.add(item.read(n.get(i), at + "[" + i + "]", r));
            }
            return out;
        }, v -> {
            ArrayNode a = JSON.arrayNode();
            v.forEach(x -> a.add(item.write(x)));
            return a;
        });
    }

    /** An object of {@code schema}. */
    public static <R extends Record> Codec<R> object(ObjectSchema<R> schema) {
        return of(Codec.Shape.OBJECT, "an object (`" + schema.name() + "`)", schema::read, schema::write);
    }
}
