package io.nvmeof.initiator;

/** Completion of an {@link IoRequest}: {@code error} is null on success. Runs on an event loop: keep it short. */
@FunctionalInterface
public interface IoCallback {
    void completed(IoRequest request, Throwable error);
}
