package io.nvmeof.target;

import java.util.Objects;
import java.util.function.Function;

/**
 * One tunable of the target, a row of {@link Settings#ALL}: its name as the JSON configuration
 * spells it ({@link #key}), its command-line flag, its type and range, its default, whether a
 * reload changes it, and what it does. The configuration reader, the command line, {@code
 * --show-config}, the man page and the README's table are all made from these rows.
 *
 * @param <T> the value's Java type
 */
public final class Setting<T> {
    private final int index;
    private final String key;
    private final String group;
    private final Class<T> type;
    private final String typeText;
    private final T defaultValue;
    private final String defaultText;
    private final boolean reloads;
    private final String help;
    private final Function<String, T> parser;
    private final Function<T, String> formatter;
    private final Function<T, String> checker;

    Setting(int index, String key, String group, Class<T> type, String typeText, T defaultValue, String defaultText,
            boolean reloads, String help, Function<String, T> parser, Function<T, String> formatter,
            Function<T, String> checker) {
        this.index = index;
        this.key = key;
        this.group = group;
        this.type = type;
        this.typeText = typeText;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.reloads = reloads;
        this.help = help;
        this.parser = parser;
        this.formatter = formatter;
        this.checker = checker;
    }

    int index() {
        return index;
    }

    /** The name in the JSON configuration ({@code "settings": {KEY: value}}) and in {@code --show-config}. */
    public String key() {
        return key;
    }

    /** The command-line flag of {@code nvmeof target}: {@code --} and the key with dashes. */
    public String flag() {
        return "--" + key.replace('_', '-');
    }

    /** Which part of the target it tunes: threads, wire, limits, timeouts, rdma. */
    public String group() {
        return group;
    }

    public Class<T> type() {
        return type;
    }

    /** Its type and range for a person: "integer 1..1024", "size", "milliseconds 100..3600000". */
    public String typeText() {
        return typeText;
    }

    public T defaultValue() {
        return defaultValue;
    }

    /** The default for a person (some say what 0 means: "0 (one per core)"). */
    public String defaultText() {
        return defaultText != null ? defaultText : format(defaultValue);
    }

    /** Whether a reload changes it; one that does not keeps the value the target started with. */
    public boolean reloads() {
        return reloads;
    }

    public String help() {
        return help;
    }

    /**
     * The value written as {@code text} (a command-line argument, or a JSON value as text),
     * checked against the range; throws {@link IllegalArgumentException} saying what is wrong,
     * without naming the setting (the caller names the flag or field).
     */
    public T parse(String text) {
        T v = parser.apply(Objects.requireNonNull(text).trim());
        check(v);
        return v;
    }

    /** Throws {@link IllegalArgumentException} if {@code value} is outside the range. */
    public void check(T value) {
        String problem = checker.apply(Objects.requireNonNull(value, key));
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** The value as {@link #parse} reads it back. */
    public String format(T value) {
        return formatter.apply(value);
    }

    /** {@link #format} of a value known only as an object of this setting's type. */
    public String formatObject(Object value) {
        return format(type.cast(value));
    }

    @Override
    public String toString() {
        return key;
    }
}
