package io.nvmeof.cli;

import picocli.CommandLine.Option;

/** {@code -o/--output-format normal|json|json+}, as in nvme-cli and fio. */
final class OutputFormat {
    @Option(names = {"-o", "--output-format"}, completionCandidates = Completions.OutputFormats.class, defaultValue = "normal", description = "normal, json or (bench) json+,"
            + " which adds the latency bins as fio's does (default: ${DEFAULT-VALUE}).")
    String format;

    boolean json() {
        if (!format.equals("normal") && !format.equals("json") && !format.equals("json+")) {
            throw new IllegalArgumentException("--output-format '" + format + "': expected normal, json or json+");
        }
        return !format.equals("normal");
    }

    /** fio's json+: JSON with the latency bins. */
    boolean jsonPlus() {
        return json() && format.equals("json+");
    }
}
