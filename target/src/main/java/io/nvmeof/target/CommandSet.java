package io.nvmeof.target;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A command set (the I/O controller's admin commands, the discovery controller's, the NVM
 * commands): one handler per opcode, chosen once when a command is parsed, as the kernel
 * target binds {@code req->execute} in {@code nvmet_req_init}. A handler says what its
 * command is, what it does to data (the Commands Supported and Effects log is generated from
 * that) and whether it calls the namespace's backend (which may block: the command then runs
 * on the I/O executor when the backend does), and runs it. An opcode without a handler is
 * Invalid Command Opcode.
 */
final class CommandSet {
    /** How a command runs, on its queue's event loop. */
    @FunctionalInterface
    interface Execute {
        void run(Request r, Controller c);
    }

    /** Effects (Base 2.0, Figure 210): the command may change logical block content. */
    static final int LBCC = 1 << 1;

    /**
     * One command of a set.
     *
     * @param effects      the effects bits of its Commands Supported and Effects entry, besides CSUPP
     * @param callsBackend whether it reads, writes or flushes through the namespace's backend
     */
    record Handler(int opcode, String name, int effects, boolean callsBackend, Execute execute) {
    }

    private final String name;
    private final Handler[] byOpcode = new Handler[256];
    private final List<Handler> handlers = new ArrayList<>();

    CommandSet(String name, Handler... hs) {
        this.name = name;
        for (Handler h : hs) {
            if (byOpcode[h.opcode()] != null) {
                throw new IllegalArgumentException(name + ": opcode " + Integer.toHexString(h.opcode()) + " twice");
            }
            byOpcode[h.opcode()] = h;
            handlers.add(h);
        }
    }

    /** The handler of {@code opcode} (0..255), or null: not in this set. */
    Handler handler(int opcode) {
        return byOpcode[opcode & 0xff];
    }

    List<Handler> handlers() {
        return Collections.unmodifiableList(handlers);
    }

    @Override
    public String toString() {
        return name + " command set";
    }
}
