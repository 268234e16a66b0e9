package io.nvmeof.daemon;

import io.nvmeof.daemon.config.ObjectSchema;
import io.nvmeof.daemon.config.Schemas;
import io.nvmeof.daemon.rpc.Management;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The reference pages under {@code docs/reference/}, made from the tables they describe: the
 * configuration's objects ({@link Schemas}), the settings ({@code Settings}) and the management
 * API's methods. {@code ReferenceTest} fails when a page in the tree differs from what this makes.
 */
public final class Reference {
    private static final String MADE = "<!-- made by io.nvmeof.daemon.Reference; ReferenceTest fails when this file"
            + " differs (write it with -Dnvmeof.writeDocs=true) -->\n\n";

    private Reference() {
    }

    /** Each page by its file name under {@code docs/reference/}. */
    public static Map<String, String> pages() {
        Map<String, String> pages = new LinkedHashMap<>();
        pages.put("configuration.md", configuration());
        pages.put("settings.md", MADE + "# Settings\n\nEvery tunable of the target: a key of the configuration's"
                + " `\"settings\"` object, a flag of `nvmeof target`, a line of `--show-config`. A flag overrides the"
                + " configuration's value; a reload changes those marked so.\n\n" + SettingsTable.markdown());
        pages.put("management.md", MADE + "# Management API\n\nJSON-RPC 2.0 over the Unix socket, one request and one"
                + " answer a line (`nvmeof rpc METHOD 'PARAMS'`). A parameter named as a configuration field takes what"
                + " that field takes (see [configuration](configuration.md)); errors name the parameter as"
                + " `params.FIELD`.\n\n" + Management.reference());
        return pages;
    }

    private static String configuration() {
        StringBuilder b = new StringBuilder(MADE);
        b.append("# Configuration objects\n\n");
        b.append("The JSON configuration (`nvmeof target --config FILE`) holds `ports`, `subsystems`, `settings`"
                + " (see [settings](settings.md)), `hosts`, `metrics` and `management`. The objects below are read,"
                + " written (`--show-config`, `get_config`, `save_config`), changed by a reload and taken by the"
                + " management API from one schema each (`io.nvmeof.daemon.config.Schemas`): a row per field. An"
                + " unknown key or a bad value is refused with its path (`subsystems[0].namespaces[1].size`). The"
                + " commands that set these fields are in [commands](commands.md).\n\n");
        for (ObjectSchema<?> s : Schemas.ALL) {
            b.append(s.reference()).append('\n');
        }
        return b.toString().stripTrailing() + "\n";
    }
}
