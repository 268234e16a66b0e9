package io.nvmeof.initiator;

/** Where a namespace device's commands go: one controller, or a multipath set of controllers. */
interface IoSink {
    /** Sends an I/O command (its completion completes it). */
    void submitIo(Command c);

    /** Throws if the caller is on an event loop a blocking call would wait for. */
    void checkBlockingAllowed();

    /** The longest a synchronous caller waits for one command. */
    long callerTimeoutMillis();

    /** Where the commands go, for messages. */
    String describe();
}
