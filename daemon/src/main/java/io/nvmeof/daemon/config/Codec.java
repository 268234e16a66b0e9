package io.nvmeof.daemon.config;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;

/**
 * How one field's value is read from JSON, checked and written back: the typed half of a
 * {@link Field} row. {@link #read} throws a {@link ConfigException} naming {@code at} for a value
 * it does not take; {@link #write} gives what {@link #read} reads back as the same value.
 */
public interface Codec<T> {
    /** The value in {@code n} (present, maybe JSON null), found at the path {@code at}. */
    T read(JsonNode n, String at, Reading reading);

    /** {@code v} as JSON ({@code v} is not null). */
    JsonNode write(T v);

    /** What the field takes, as the reference and the errors say it ("a size like 64M", ...). */
    String type();

    /** The shape of its JSON value: what a command line that sets it gives. */
    default Shape shape() {
        return Shape.VALUE;
    }

    /** The shape of a field's JSON value. */
    enum Shape {
        /** A number or text (a flag's argument, as it is). */
        VALUE,
        /** true or false (a flag that may stand alone). */
        BOOLEAN,
        /** An array of values (a flag given once for each). */
        LIST,
        /** An object (not set by a flag). */
        OBJECT
    }

    /**
     * A value spread over several keys of the object that holds it, not under a key of its own
     * (a port's transport options: {@code "tls"}, {@code "rdma_provider"}).
     */
    interface Spread<T> extends Codec<T> {
        /** The keys of the holding object it takes. */
        List<String> keys();

        /** The value in {@code parent} (at {@code at}). */
        T readFrom(JsonNode parent, String at, Reading reading);

        /** Reference rows, one a key: key, what it takes, and what it is ({@code help}: the row's). */
        List<String[]> rows(String help);

        @Override
        default T read(JsonNode n, String at, Reading reading) {
            return readFrom(n, at, reading);
        }

        @Override
        default Shape shape() {
            return Shape.OBJECT;
        }
    }

    /** What a read has to hand beyond the value: where the document came from. */
    interface Reading {
        /** A path as written in the document: a relative one is taken next to the document's file. */
        Path resolve(String path);

        /** Notes that a secret is given inline at {@code at} (the document must then be private). */
        default void inlineSecret(String at) {
        }

        /** A reading of a document that is not a file: paths are taken as they are. */
        Reading NONE = Path::of;
    }
}
