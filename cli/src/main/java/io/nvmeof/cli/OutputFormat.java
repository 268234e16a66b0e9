package io.nvmeof.cli;

import picocli.CommandLine.Option;

/** {@code -o/--output-format normal|json}, as in nvme-cli. */
final class OutputFormat {
    @Option(names = {"-o", "--output-format"}, defaultValue = "normal", description = "normal or json (default: ${DEFAULT-VALUE}).")
    String format;

    boolean json() {
        if (!format.equals("normal") && !format.equals("json")) {
            throw new IllegalArgumentException("--output-format '" + format + "': expected normal or json");
        }
        return format.equals("json");
    }
}
