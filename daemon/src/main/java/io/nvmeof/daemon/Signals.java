package io.nvmeof.daemon;

import sun.misc.Signal;

/** SIGINT / SIGTERM as an orderly stop request rather than an abrupt JVM exit. */
public final class Signals {
    private Signals() {
    }

    /** SIGHUP, the conventional "reload your configuration". */
    public static void onReload(Runnable action) {
        Signal.handle(new Signal("HUP"), s -> action.run());
    }

    public static void onTermination(Runnable action) {
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                Signal.handle(new Signal(name), s -> action.run());
            } catch (IllegalArgumentException e) {
                // the signal is not available here (e.g. reserved by the JVM); the default applies
            }
        }
    }
}
