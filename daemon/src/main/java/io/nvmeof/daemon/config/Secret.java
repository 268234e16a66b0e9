package io.nvmeof.daemon.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.target.backend.SmallFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

/**
 * A key or password of the configuration: given inline ({@code KEY}, and the configuration must
 * then be private) or in a private file ({@code KEY_file}), never both. {@code text} is what a
 * writer puts inline (the key, or a marker that stands for it); {@code file} is where it came from
 * (null: inline), which a writer names instead of the key.
 *
 * @param value the key, parsed
 * @param text the key as text, or a marker that stands for it
 * @param file the file it was read from, or null
 */
public record Secret<T>(T value, String text, Path file) {
    /** The most a key or password file may hold: keys are tens of bytes, a few KiB covers any. */
    public static final int MAX_FILE = 8 << 10;
    /** What stands for a key that is not shown. */
    public static final String HIDDEN_TEXT = "(set, not shown)";
    /** What stands for an inline key in a saved configuration; the loader refuses it with what to do. */
    public static final String NOT_SAVED = "(inline key not saved: move it to a key file)";

    /** {@code value} ({@code text} as text), from {@code file} or (null) inline; null if {@code value} is. */
    public static <T> Secret<T> of(T value, String text, Path file) {
        return value == null ? null : new Secret<>(value, text, file);
    }

    /** Two secrets are the same if they hold the same key, wherever it came from. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Secret<?> s && text.equals(s.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** Never the key: a change log or an error may print it. */
    @Override
    public String toString() {
        return file != null ? "(key in " + file + ")" : "(key given inline)";
    }

    /** The same as a writer shows it: a file stays its path, an inline key becomes what {@code shown} says. */
    public Secret<T> shown(ConfigWriter.Secrets shown) {
        return file != null ? this : new Secret<>(value, switch (shown) {
            case HIDDEN -> HIDDEN_TEXT;
            case SAVED -> NOT_SAVED;
            case WRITTEN -> text;
        }, null);
    }

    /**
     * The codec of a secret {@code key} (and {@code key_file}) in the object that holds it: {@code
     * parse} turns its text into the value, throwing {@link IllegalArgumentException} for text that
     * is not one; {@code type} says what it takes.
     */
    public static <T> Codec.Spread<Secret<T>> codec(String key, String type, Function<String, T> parse) {
        return new Codec.Spread<>() {
            @Override
            public List<String> keys() {
                return List.of(key, key + "_file");
            }

            @Override
            public Secret<T> readFrom(JsonNode parent, String at, Codec.Reading reading) {
                String inline = Codecs.text(parent, key, at, null);
                String path = Codecs.text(parent, key + "_file", at, null);
                if (NOT_SAVED.equals(inline)) {
                    throw new ConfigException(at + "." + key, "inline key not saved: move it to a key file and name that"
                            + " file in " + key + "_file (save_config never writes a key)");
                }
                if (HIDDEN_TEXT.equals(inline)) {
                    throw new ConfigException(at + "." + key, "is the placeholder that stands for a key not shown: give the"
                            + " key's file in " + key + "_file");
                }
                if (inline != null && path != null) {
                    throw new ConfigException(at + "." + key, "is given inline and as " + key + "_file; give one");
                }
                if (inline == null && path == null) {
                    return null;
                }
                String where = at + "." + (inline != null ? key : key + "_file");
                Path file = null;
                String text = inline;
                if (inline != null) {
                    reading.inlineSecret(where);
                } else {
                    file = reading.resolve(path);
                    String problem = PrivateFiles.problem(file);
                    if (problem != null) {
                        throw new ConfigException(where, problem);
                    }
                    try {
                        text = new String(SmallFiles.read(file, MAX_FILE), StandardCharsets.UTF_8).trim();
                    } catch (IOException e) {
                        throw new ConfigException(where, "cannot read " + file + ": " + e.getMessage());
                    }
                }
                try {
                    return new Secret<>(parse.apply(text), text, file);
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(where, e.getMessage());
                }
            }

            @Override
            public List<String[]> rows(String help) {
                return List.of(new String[] {key, type, help + " (the configuration must then be private)"},
                    new String[] {key + "_file", "a path (a relative one is next to the configuration)",
                        "the private file that holds it (instead of `" + key + "`); a written configuration names"
                                + " this file, never the key"});
            }

            @Override
            public JsonNode write(Secret<T> v) {
                ObjectNode n = JsonNodeFactory.instance.objectNode();
                if (v.file() != null) {
                    n.put(key + "_file", v.file().toString());
                } else {
                    n.put(key, v.text());
                }
                return n;
            }

            @Override
            public String type() {
                return type;
            }
        };
    }
}
