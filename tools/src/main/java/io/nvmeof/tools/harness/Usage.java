package io.nvmeof.tools.harness;

/** The command line of a harness program: its usage on {@code --help} or too few arguments. */
final class Usage {
    private Usage() {
    }

    /**
     * Returns when {@code args} are enough to run; otherwise prints {@code usage} (to stdout on
     * {@code --help}, which then exits 0; to stderr otherwise, exit 2) and exits.
     */
    static void check(String[] args, int needed, String usage) {
        boolean help = args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"));
        if (!help && args.length >= needed) {
            return;
        }
        (help ? System.out : System.err).println(usage);
        System.exit(help ? 0 : 2);
    }
}
