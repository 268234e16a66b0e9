package io.nvmeof.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.BindException;
import org.junit.jupiter.api.Test;

class FailuresTest {
    @Test
    void aBindFailureDescribedTwiceCarriesItsHintOnce() {
        String once = Failures.describe(new BindException("bind(..) failed with error(-98): Address already in use"));
        assertEquals("bind(..) failed with error(-98): Address already in use"
                + " (another process listens there, or the port is this one's twice)", once);
        // a listener wraps the first description in its own message; the launcher describes that again
        IOException wrapped = new IOException("port 1: cannot listen on tcp://127.0.0.1:4420: " + once);
        assertEquals("port 1: cannot listen on tcp://127.0.0.1:4420: " + once, Failures.describe(wrapped));
    }
}
