package io.nvmeof.daemon;

import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.TargetTransports;

/** The settings table ({@link Settings}) and the transports' port options as documentation: the tables of docs/reference/settings.md. */
public final class SettingsTable {
    /** The line before the generated table in README.md, and the line after it. */
    public static final String BEGIN = "<!-- settings table: made from io.nvmeof.target.Settings by SettingsTable -->";
    public static final String END = "<!-- end of settings table -->";

    private SettingsTable() {
    }

    /** The tables in Markdown, between {@link #BEGIN} and {@link #END}. */
    public static String markdown() {
        StringBuilder b = new StringBuilder(BEGIN).append('\n');
        b.append("| setting (`settings` key) | flag of `nvmeof target` | takes | default | reload | what it does |\n");
        b.append("|---|---|---|---|---|---|\n");
        for (Setting<?> s : Settings.ALL) {
            b.append("| `").append(s.key()).append("` | `").append(s.flag()).append("` | ").append(s.typeText())
                    .append(" | ").append(s.defaultText()).append(" | ").append(s.reloads() ? "yes" : "no, kept")
                    .append(" | ").append(s.help().replace("|", "\\|")).append(" |\n");
        }
        b.append('\n');
        b.append("| port option (key of a port) | flag of `nvmeof target` | transport | takes | what it does |\n");
        b.append("|---|---|---|---|---|\n");
        for (String t : TargetTransports.names()) {
            for (TargetTransport.PortOption o : TargetTransports.type(t).portOptions()) {
                b.append("| `").append(o.name()).append("` | `--").append(o.name().replace('_', '-')).append("` | ")
                        .append(t).append(" | ").append(o.values().replace("|", ", ")).append(" | ")
                        .append(o.help().replace("|", "\\|")).append(" |\n");
            }
        }
        return b.append(END).append('\n').toString();
    }
}
