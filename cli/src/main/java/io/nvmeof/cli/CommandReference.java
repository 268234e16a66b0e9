package io.nvmeof.cli;

import java.util.Map;
import picocli.CommandLine;

/**
 * {@code docs/reference/commands.md}: every command of {@code nvmeof} with its usage, as {@code
 * --help} prints it, made from the same picocli model (whose schema-backed flags come from the
 * configuration's rows). {@code CommandReferenceTest} fails when the page differs.
 */
public final class CommandReference {
    /** The width the page's usage blocks are set at, whatever the terminal. */
    static final int WIDTH = 100;

    private CommandReference() {
    }

    /** The page. */
    public static String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("<!-- made by io.nvmeof.cli.CommandReference; CommandReferenceTest fails when this file differs"
                + " (write it with -Dnvmeof.writeDocs=true) -->\n\n# Commands\n\nEvery command of `nvmeof`, as"
                + " `nvmeof COMMAND --help` prints it. Flags that set a configuration field take what that field takes"
                + " (see [configuration](configuration.md)); `nvmeof target`'s settings are in"
                + " [settings](settings.md).\n\n");
        CommandLine root = Main.commandLine();
        append(b, root, "nvmeof");
        return b.toString().stripTrailing() + "\n";
    }

    private static void append(StringBuilder b, CommandLine cl, String path) {
        if (cl.getCommand() instanceof CommandLine.HelpCommand) {
            return;
        }
        cl.setUsageHelpWidth(WIDTH);
        cl.setUsageHelpAutoWidth(false);
        b.append("## `").append(path).append("`\n\n```\n")
                .append(cl.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing()).append("\n```\n\n");
        for (Map.Entry<String, CommandLine> sub : cl.getSubcommands().entrySet()) {
            if (sub.getKey().equals(sub.getValue().getCommandSpec().name())) { // an alias is listed once, by its name
                append(b, sub.getValue(), path + " " + sub.getKey());
            }
        }
    }
}
