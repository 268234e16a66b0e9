package io.nvmeof.cli;

import picocli.CommandLine.Option;

/** {@code -o/--output-format normal|json|json+}, as in nvme-cli and fio. */
final class OutputFormat {
    /** What -o takes. */
    static final java.util.List<String> FORMATS = java.util.List.of("normal", "json", "json+");

    @Option(names = {"-o", "--output-format"}, completionCandidates = Completions.OutputFormats.class, defaultValue = "normal", description = "normal, json or (bench) json+,"
            + " which adds the latency bins as fio's does (default: ${DEFAULT-VALUE}).")
    String format;

    boolean json() {
        if (!FORMATS.contains(format)) {
            throw new IllegalArgumentException("--output-format '" + format + "': expected one of " + FORMATS);
        }
        return !format.equals("normal");
    }

    /** fio's json+: JSON with the latency bins. */
    boolean jsonPlus() {
        return json() && format.equals("json+");
    }
}
