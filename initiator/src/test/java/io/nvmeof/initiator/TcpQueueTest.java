package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.ICRespPdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The host's NVMe/TCP queue against a controller that breaks the rules, through an embedded channel. */
class TcpQueueTest {
    private final List<ByteBuf> sent = new ArrayList<>();
    private TcpQueue q;
    private EmbeddedChannel ch;

    /** A queue with no in-capsule data, so every write waits for R2Ts; ICResp given. */
    private void open() {
        q = new TcpQueue(1, 8, 0, false, false, TimeUnit.SECONDS.toNanos(30), 5000);
        ch = new EmbeddedChannel(q.handler());
        assertEquals(PduType.IC_REQ, PduType.of(next().getByte(0)));
        ByteBuffer b = Flyweight.allocate(ICRespPdu.SIZE);
        new ICRespPdu().<ICRespPdu>wrap(b, 0).encode(0, false, false, 8192);
        ch.writeInbound(Unpooled.wrappedBuffer(b));
        assertTrue(q.ready().isDone() && !q.ready().isCompletedExceptionally());
    }

    private ByteBuf next() {
        ch.runPendingTasks();
        ByteBuf b = ch.readOutbound();
        if (b != null) {
            sent.add(b);
        }
        return b;
    }

    @AfterEach
    void close() {
        if (ch != null) {
            ch.finishAndReleaseAll();
        }
        sent.forEach(ByteBuf::release);
    }

    private Command write(int length) {
        Command c = new Command("Write").opcode(0x01).nsid(1).dataOut(ByteBuffer.allocateDirect(length), length);
        q.submit(c);
        ByteBuf capsule = next();
        assertEquals(PduType.CAPSULE_CMD, PduType.of(capsule.getByte(0)));
        return c;
    }

    private void r2t(Command c, long offset, long length) {
        ByteBuffer b = Flyweight.allocate(R2TPdu.SIZE);
        new R2TPdu().<R2TPdu>wrap(b, 0).encode(c.cid, 1, offset, length, false);
        ch.writeInbound(Unpooled.wrappedBuffer(b));
    }

    /** The queue ended the connection with an H2CTermReq for a data transfer out of range, failing the command. */
    private void terminatedOutOfRange(Command c) {
        ByteBuf term = null;
        for (ByteBuf b = next(); b != null; b = next()) {
            if (PduType.of(b.getByte(0)) == PduType.H2C_TERM_REQ) {
                term = b;
            }
        }
        assertNotNull(term, "an H2CTermReq");
        assertEquals(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE.code, term.getShortLE(8));
        assertFalse(ch.isActive(), "the connection ends");
        assertTrue(c.isCompletedExceptionally(), "the command fails");
    }

    @Test
    void r2tsInOrderAreAnswered() {
        open();
        Command c = write(16384);
        r2t(c, 0, 8192);
        assertEquals(PduType.H2C_DATA, PduType.of(next().getByte(0)));
        r2t(c, 8192, 8192);
        assertEquals(PduType.H2C_DATA, PduType.of(next().getByte(0)));
        assertTrue(ch.isActive());
    }

    @Test
    void anR2tAskingTwiceEndsTheConnection() {
        open();
        Command c = write(16384);
        r2t(c, 0, 8192);
        assertEquals(PduType.H2C_DATA, PduType.of(next().getByte(0)));
        r2t(c, 0, 8192);
        terminatedOutOfRange(c);
    }

    @Test
    void anR2tThatSkipsDataEndsTheConnection() {
        open();
        Command c = write(16384);
        r2t(c, 8192, 8192);
        terminatedOutOfRange(c);
    }

    @Test
    void anR2tPastTheCommandsDataEndsTheConnection() {
        open();
        Command c = write(16384);
        r2t(c, 0, 16385);
        terminatedOutOfRange(c);
    }
}
