package io.nvmeof.daemon.config;

/** A configuration error; the message starts with the path of the bad field, e.g. {@code subsystems[0].namespaces[1].nsid}. */
public final class ConfigException extends IllegalArgumentException {
    private final String field;

    public ConfigException(String field, String problem) {
        super(field + ": " + problem);
        this.field = field;
    }

    /** The path of the field in error. */
    public String field() {
        return field;
    }
}
