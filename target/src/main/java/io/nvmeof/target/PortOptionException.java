package io.nvmeof.target;

/** A port option that its transport does not know, or a value it does not take. */
public final class PortOptionException extends IllegalArgumentException {
    private final String option;

    public PortOptionException(String option, String message) {
        super(option + ": " + message);
        this.option = option;
    }

    /** The option at fault. */
    public String option() {
        return option;
    }
}
