package io.nvmeof.examples;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * An application's storage layer: fixed-size records on a remote NVMe-oF volume, record N at
 * block N. It handles a lost target itself: the initiator is told to give up on a lost
 * connection at once ({@code controllerLossTimeout(ZERO)}), and the store reconnects and retries
 * the operation a few times with a growing pause. A status the target answered is retried on the
 * same connection, unless it says Do Not Retry.
 */
public final class RecordStore implements AutoCloseable {
    private static final int ATTEMPTS = 5;
    private final String uri;
    private Controller controller;
    private BlockDevice volume;
    private int reconnects;

    public RecordStore(String uri) throws IOException {
        this.uri = uri;
        connect();
    }

    private void connect() throws IOException {
        controller = Nvmeof.connect(uri, ConnectOptions.defaults()
                .controllerLossTimeout(Duration.ZERO)
                .commandTimeout(Duration.ofSeconds(5)));
        volume = controller.namespace(1);
    }

    /** The size of one record: the volume's block. */
    public int recordSize() {
        return volume.blockSize();
    }

    public synchronized void put(long index, byte[] record) throws IOException {
        if (record.length != recordSize()) {
            throw new IllegalArgumentException("a record is " + recordSize() + " bytes");
        }
        withRetries(() -> volume.write(index * recordSize(), ByteBuffer.wrap(record)));
    }

    public synchronized byte[] get(long index) throws IOException {
        ByteBuffer in = ByteBuffer.allocate(recordSize());
        withRetries(() -> volume.read(index * recordSize(), in.clear()));
        return in.array();
    }

    /** How many times the store had to reconnect. */
    public synchronized int reconnects() {
        return reconnects;
    }

    private interface Operation {
        void run() throws IOException;
    }

    private void withRetries(Operation op) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                op.run();
                return;
            } catch (IOException e) {
                boolean answered = e instanceof NvmeStatusException;
                if (answered && ((NvmeStatusException) e).status().dnr() || attempt == ATTEMPTS) {
                    throw e;
                }
                pause(50L << attempt);
                if (!answered) {
                    reconnect(); // no answer: the connection is gone (or timed out and was reset)
                }
            }
        }
    }

    private void reconnect() {
        controller.close();
        try {
            connect();
            reconnects++;
        } catch (IOException e) {
            // the target is still away: the next attempt tries again
        }
    }

    private static void pause(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public synchronized void close() {
        controller.close();
    }
}
