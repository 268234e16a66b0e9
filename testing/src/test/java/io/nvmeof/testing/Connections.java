package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;

/** What the extension tests do with a target: connect, write, read, probe. */
final class Connections {
    private Connections() {
    }

    static ConnectOptions quick() {
        return ConnectOptions.defaults().ioQueues(1).controllerLossTimeout(Duration.ZERO)
                .connectTimeout(Duration.ofSeconds(2));
    }

    static boolean listening(InetSocketAddress a) {
        try (Socket s = new Socket()) {
            s.connect(a, 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static void writeAndRead(String uri) throws IOException {
        try (Controller c = Nvmeof.connect(uri, quick())) {
            BlockDevice d = c.namespace(1);
            ByteBuffer b = ByteBuffer.allocateDirect(d.blockSize());
            b.put(0, (byte) 42);
            d.write(0, b);
            ByteBuffer in = ByteBuffer.allocateDirect(d.blockSize());
            d.read(0, in);
            assertEquals(42, in.get(0));
        }
    }
}
