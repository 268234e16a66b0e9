package io.nvmeof.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the samples of a Prometheus text exposition (format 0.0.4): {@code name{labels} value}
 * per line, comments skipped. Enough for {@code nvmeof top}, which reads our own target's
 * endpoint; not a general Prometheus client.
 */
public final class MetricsText {
    /** One sample: its metric name (with any {@code _total}, {@code _bucket} suffix), labels and value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String key) {
            return labels.getOrDefault(key, "");
        }
    }

    private MetricsText() {
    }

    public static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.indexOf(' ');
            String name;
            Map<String, String> labels = new TreeMap<>();
            int rest;
            if (brace >= 0 && (space < 0 || brace < space)) {
                name = line.substring(0, brace);
                rest = labels(line, brace + 1, labels, lineNo);
            } else if (space > 0) {
                name = line.substring(0, space);
                rest = space;
            } else {
                throw new IllegalArgumentException("metrics line " + lineNo + " has no value: " + line);
            }
            String[] tail = line.substring(rest).strip().split("\\s+");
            samples.add(new Sample(name, labels, value(tail[0], lineNo)));
        }
        return samples;
    }

    /** Reads {@code k="v",...}} from {@code i}; returns the index after the closing brace. */
    private static int labels(String line, int i, Map<String, String> into, int lineNo) {
        while (i < line.length() && line.charAt(i) != '}') {
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("metrics line " + lineNo + ": bad labels: " + line);
            }
            String key = line.substring(i, eq).strip();
            StringBuilder v = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char c = line.charAt(j);
                if (c == '\\' && j + 1 < line.length()) {
                    char n = line.charAt(++j);
                    v.append(n == 'n' ? '\n' : n);
                } else {
                    v.append(c);
                }
            }
            into.put(key, v.toString());
            i = j + 1;
            if (i < line.length() && line.charAt(i) == ',') {
                i++;
            }
        }
        if (i >= line.length()) {
            throw new IllegalArgumentException("metrics line " + lineNo + ": labels not closed: " + line);
        }
        return i + 1;
    }

    private static double value(String s, int lineNo) {
        switch (s) {
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                try {
                    return Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("metrics line " + lineNo + ": bad value " + s);
                }
        }
    }
}
