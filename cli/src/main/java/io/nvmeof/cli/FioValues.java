package io.nvmeof.cli;

import io.nvmeof.fabric.Sizes;
import java.util.Locale;
import picocli.CommandLine;

/** Option values as fio spells them: sizes with suffixes (255M, 4k), times with units (5s, 500ms, 2m). */
final class FioValues {
    private FioValues() {
    }

    /** A size in bytes: a number with fio's suffixes (k, M, G, T, with or without i and B). */
    static final class Size implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            String t = value.trim();
            if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
                return Long.parseLong(t); // bytes, 0 included
            }
            return Sizes.parse(t, "the size");
        }
    }

    /** A time in seconds: a number of seconds, or with fio's units (us, ms, s, m, h, d). */
    static final class Seconds implements CommandLine.ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            return seconds(value);
        }
    }

    static double seconds(String value) {
        String t = value.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.')) {
            i++;
        }
        double n;
        try {
            n = Double.parseDouble(t.substring(0, i));
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a time (a number of seconds, or with a"
                    + " unit: us, ms, s, m, h, d)");
        }
        double unit = switch (t.substring(i)) {
            case "", "s", "sec" -> 1;
            case "us", "usec" -> 1e-6;
            case "ms", "msec" -> 1e-3;
            case "m", "min" -> 60;
            case "h", "hour", "hours" -> 3600;
            case "d", "day", "days" -> 86400;
            default -> throw new CommandLine.TypeConversionException("'" + value + "': unknown time unit '"
                    + t.substring(i) + "' (us, ms, s, m, h, d)");
        };
        return n * unit;
    }
}
