package io.nvmeof.daemon.config;

import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Function;

/**
 * One field of a configuration object, written once: its JSON key, the record component it fills,
 * its codec, its default, its help, and how a change to it reaches a running target. An {@link
 * ObjectSchema} is a list of these; the reader, the writer, the reload's diff, the management
 * API's parameter checks and the reference pages all come from it.
 *
 * @param key the JSON key
 * @param component the record component it fills
 * @param codec reads, checks and writes the value
 * @param dflt the value when the key is absent, from the values read so far (null function: the
 *     field is required)
 * @param missing what the error says when a required field is absent
 * @param writeDefault whether the writer writes the value when it is the default
 * @param apply how a change reaches a running target
 * @param help one line for the reference
 * @param defaultNote what the reference says of a default computed from other fields (null: the
 *     default's value)
 * @param flag the flag of the {@code nvmeof} command that sets it (null: {@code --} and the key
 *     with dashes)
 * @param live how an {@link Apply#IN_PLACE} row reaches the running object (null: the applier
 *     applies it where it opens and closes the object)
 */
public record Field<T>(String key, String component, Codec<T> codec, Function<ObjectSchema.Values, T> dflt,
                       String missing, boolean writeDefault, Apply apply, String help, String defaultNote,
                       String flag, Live<?, T> live) {

    /** How a change to a field reaches a running target, from the cheapest. */
    public enum Apply {
        /** It names the object: another value is another object (a namespace's nsid, a subsystem's NQN). */
        IDENTITY("names it"),
        /** Applied to the live object as it runs; nothing is reopened and no host is disconnected. */
        IN_PLACE("in place"),
        /** The live namespace is resized in place (a host sees a namespace attribute notice). */
        RESIZE("resizes in place"),
        /** The live object is closed and opened again with the new value (its hosts see it go and come). */
        REOPEN("reopens it"),
        /** Takes effect at the next start of the target. */
        RESTART("at the next start");

        private final String text;

        Apply(String text) {
            this.text = text;
        }

        /** As the reference says it. */
        public String text() {
            return text;
        }
    }

    /** A field with default {@code dflt} (may be null: absent stays null). */
    public static <T> Field<T> optional(String key, String component, Codec<T> codec, T dflt, Apply apply, String help) {
        return new Field<>(key, component, codec, v -> dflt, null, false, apply, help, null, null, null);
    }

    /** A field that must be given; {@code missing} is what the error says when it is not. */
    public static <T> Field<T> required(String key, String component, Codec<T> codec, String missing, Apply apply,
                                        String help) {
        return new Field<>(key, component, codec, null, missing, true, apply, help, null, null, null);
    }

    /** The same, written even when it holds its default. */
    public Field<T> alwaysWritten() {
        return new Field<>(key, component, codec, dflt, missing, true, apply, help, defaultNote, flag, live);
    }

    /** The same with a default computed from the object's other fields, which {@code note} describes. */
    public Field<T> derivedDefault(Function<ObjectSchema.Values, T> f, String note) {
        return new Field<>(key, component, codec, f, missing, writeDefault, apply, help, note, flag, live);
    }

    /**
     * The same with its default described as {@code note} in the reference: a default that stands
     * for "not given" (a size of 0: the storage's own), which the writer leaves out.
     */
    public Field<T> noted(String note) {
        return new Field<>(key, component, codec, dflt, missing, writeDefault, apply, help, note, flag, live);
    }

    /** The same, set by the flag {@code flag} on the command line (instead of {@code --} and the key with dashes). */
    public Field<T> flag(String flag) {
        return new Field<>(key, component, codec, dflt, missing, writeDefault, apply, help, defaultNote, flag, live);
    }

    /** The same, applied to the running object {@code L} by {@code live}. */
    public <L> Field<T> live(Live<L, T> live) {
        return new Field<>(key, component, codec, dflt, missing, writeDefault, apply, help, defaultNote, flag, live);
    }

    /**
     * How a row reaches the object it configures while that runs ({@code L}: what the applier
     * hands it, e.g. a namespace of a subsystem of a target).
     */
    public interface Live<L, T> {
        /** Whether {@code live} holds {@code value} already. */
        boolean holds(L live, T value);

        /** Gives {@code live} the value {@code value}. */
        void set(L live, T value);

        /** What the change log says of {@code live} now holding {@code value} ("now in ANA group 2"). */
        String said(L live, T value);

        /** One from its parts. */
        static <L, T> Live<L, T> of(BiPredicate<L, T> holds, BiConsumer<L, T> set,
                                    BiFunction<L, T, String> said) {
            return new Live<>() {
                @Override
                public boolean holds(L live, T value) {
                    return holds.test(live, value);
                }

                @Override
                public void set(L live, T value) {
                    set.accept(live, value);
                }

                @Override
                public String said(L live, T value) {
                    return said.apply(live, value);
                }
            };
        }
    }

    /** The flag of the {@code nvmeof} command that sets it. */
    public String flagName() {
        return flag != null ? flag : "--" + key.replace('_', '-');
    }

    /** Its default as the reference and the help say it: its note, its value as JSON, or none. */
    public String defaultText() {
        if (defaultNote != null) {
            return defaultNote;
        }
        if (isRequired()) {
            return "required";
        }
        Object d;
        try {
            d = dflt.apply(k -> null);
        } catch (RuntimeException e) {
            d = null;
        }
        return d == null ? "none" : "`" + write(d).replace("|", "\\|") + "`";
    }

    /** {@code v} (of this field) as JSON text, as the configuration would hold it. */
    @SuppressWarnings("unchecked")
    public String write(Object v) {
        return v == null ? "null" : codec.write((T) v).toString();
    }

    /** Whether it must be given. */
    public boolean isRequired() {
        return dflt == null;
    }
}
