package io.nvmeof.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.Codec;
import io.nvmeof.daemon.config.Field;
import io.nvmeof.daemon.config.ObjectSchema;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Flags made from the rows of a configuration object's schema ({@code Schemas}), as the {@code
 * target} command's are made from the settings table: one per row (but those a command names
 * otherwise, and objects), with the row's flag, help and default; and the management API's
 * parameters they give, as JSON that the daemon checks with the same rows.
 */
final class SchemaOptions {
    private SchemaOptions() {
    }

    /** Adds a flag to {@code spec} for each row of {@code schema} but those of {@code except}. */
    static void add(CommandSpec spec, ObjectSchema<?> schema, Set<String> except) {
        for (Field<?> f : rows(schema, except)) {
            String help = Character.toUpperCase(f.help().charAt(0)) + f.help().substring(1) + "."
                    + (f.codec().shape() == Codec.Shape.LIST ? " Repeatable." : "")
                    + (f.isRequired() ? "" : " Default: " + f.defaultText().replace("`", "") + ".");
            OptionSpec.Builder b = OptionSpec.builder(f.flagName()).description(help);
            switch (f.codec().shape()) {
                case LIST -> b.type(List.class).auxiliaryTypes(String.class).paramLabel(label(f));
                // Boolean: picocli then takes a following argument only if it is true or false
                case BOOLEAN -> b.type(Boolean.class).arity("0..1").fallbackValue("true").paramLabel("true|false");
                default -> b.type(String.class).paramLabel(label(f));
            }
            spec.addOption(b.build());
        }
    }

    /** Puts into {@code params} each flag of {@link #add} that the command line gave, under its row's key. */
    static void put(CommandSpec spec, ObjectSchema<?> schema, Set<String> except, ObjectNode params) {
        CommandLine.ParseResult given = spec.commandLine().getParseResult();
        for (Field<?> f : rows(schema, except)) {
            OptionSpec o = spec.findOption(f.flagName());
            if (o == null || !given.hasMatchedOption(o)) {
                continue;
            }
            Object v = o.getValue();
            switch (f.codec().shape()) {
                case LIST -> {
                    ArrayNode a = params.putArray(f.key());
                    for (Object x : (List<?>) v) {
                        a.add(x.toString());
                    }
                }
                case BOOLEAN -> params.put(f.key(), (Boolean) v);
                default -> params.set(f.key(), value(f, v.toString()));
            }
        }
    }

    /**
     * A flag's text as the JSON its row takes: as text where the row's codec takes text (a serial
     * of digits stays text, an OUI stays hex), else as a number where it is one; the daemon checks
     * it either way and names the field.
     */
    private static JsonNode value(Field<?> f, String t) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        try {
            f.codec().read(json.textNode(t), f.key(), Codec.Reading.NONE);
            return json.textNode(t);
        } catch (RuntimeException e) {
            return t.matches("-?[0-9]{1,18}") ? json.numberNode(Long.parseLong(t)) : json.textNode(t);
        }
    }

    private static List<Field<?>> rows(ObjectSchema<?> schema, Set<String> except) {
        return schema.fields().stream()
                .filter(f -> !except.contains(f.key()) && f.codec().shape() != Codec.Shape.OBJECT).toList();
    }

    private static String label(Field<?> f) {
        return f.key().toUpperCase(Locale.ROOT);
    }
}
