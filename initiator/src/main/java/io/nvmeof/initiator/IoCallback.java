package io.nvmeof.initiator;

/**
 * Completion of an {@link IoRequest}: {@code error} is null on success. Runs on an event loop
 * (keep it short, never block there), or, for failures found before the request reached a
 * queue (controller closed or lost), on the submitting thread or the reconnect thread.
 */
@FunctionalInterface
public interface IoCallback {
    void completed(IoRequest request, Throwable error);
}
