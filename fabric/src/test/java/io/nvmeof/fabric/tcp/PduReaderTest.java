package io.nvmeof.fabric.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.TermReqPdu;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PduReaderTest {
    /**
     * Accepts CapsuleCmd and H2CData; records what it saw as "TYPE:dataLength:firstDataByte" and
     * collects the data as it is handed over, with the buffers it came in.
     */
    static final class Recorder extends PduReader {
        final List<String> seen = new ArrayList<>();
        final List<ByteBuf> sources = new ArrayList<>();
        ByteBuf data = Unpooled.buffer();
        boolean explode;
        boolean hold;

        Recorder(boolean hd, boolean dd) {
            headerDigest = hd;
            dataDigest = dd;
        }

        @Override
        protected boolean allowed(PduType type) {
            return type == PduType.CAPSULE_CMD || type == PduType.H2C_DATA || type == PduType.H2C_TERM_REQ;
        }

        @Override
        protected long maxData(PduType type) {
            return 4096;
        }

        @Override
        protected boolean paused() {
            return hold;
        }

        void release(ChannelHandlerContext ctx) {
            hold = false;
            resume(ctx);
        }

        @Override
        protected void beginData(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength) {
            data.clear();
        }

        @Override
        protected void dataChunk(ByteBuf src, int index, int length, int offset) {
            assertEquals(data.writerIndex(), offset);
            sources.add(src);
            data.writeBytes(src, index, length);
        }

        @Override
        protected void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength) {
            if (explode) {
                seen.add("boom");
                throw new IllegalStateException("handler bug");
            }
            assertEquals(dataLength, data.writerIndex() > 0 ? data.readableBytes() : 0);
            seen.add(type + ":" + dataLength + (dataLength > 0 ? ":" + data.getByte(0) : "")
                    + (dataDigestOk ? "" : ":bad-ddgst"));
            data.clear();
        }

        @Override
        protected void onPeerTermination(FatalErrorStatus fes, long fei) {
            seen.add("TERM:" + fes + ":" + fei);
        }

        @Override
        protected void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header) {
            writeTermination(ctx, PduType.C2H_TERM_REQ, e, header);
        }
    }

    private static ByteBuf h2cData(int datal, boolean hd, boolean dd, byte fill) {
        ByteBuffer scratch = Flyweight.allocate(24);
        new DataPdu().<DataPdu>wrap(scratch, 0).encode(PduType.H2C_DATA, Pdu.FLAG_LAST_PDU, 1, 2, 0, datal, hd, dd);
        ByteBuf b = Unpooled.buffer();
        b.writeBytes(scratch);
        Crc32c crc = new Crc32c();
        if (hd) {
            b.writeIntLE(crc.compute(b, 0, 24));
        }
        int dataStart = b.writerIndex();
        for (int i = 0; i < datal; i++) {
            b.writeByte(fill);
        }
        if (dd) {
            b.writeIntLE(crc.compute(b, dataStart, datal));
        }
        return b;
    }

    @Test
    void reassemblesPdusFedOneByteAtATime() {
        Recorder r = new Recorder(true, true);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf two = Unpooled.buffer();
        ByteBuf a = h2cData(100, true, true, (byte) 7);
        ByteBuf b = h2cData(512, true, true, (byte) 9);
        two.writeBytes(a).writeBytes(b);
        a.release();
        b.release();
        while (two.isReadable()) {
            ch.writeInbound(two.readRetainedSlice(1));
        }
        two.release();
        assertEquals(List.of("H2C_DATA:100:7", "H2C_DATA:512:9"), r.seen);
        assertNull(ch.readOutbound());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                // what to corrupt, expected FES, expected FEI
                Arguments.of("unknown type", 0, 0x0a, FatalErrorStatus.INVALID_HEADER_FIELD, 0),
                Arguments.of("type not allowed", 0, PduType.C2H_DATA.code, FatalErrorStatus.PDU_SEQUENCE_ERROR, 0),
                Arguments.of("wrong hlen", 2, 25, FatalErrorStatus.INVALID_HEADER_FIELD, 2),
                Arguments.of("pdo inside header", 3, 8, FatalErrorStatus.INVALID_HEADER_FIELD, 3),
                Arguments.of("plen below header", 4, 10, FatalErrorStatus.INVALID_HEADER_FIELD, 4),
                Arguments.of("plen past limit", 4, 24 + 8192, FatalErrorStatus.DATA_TRANSFER_LIMIT_EXCEEDED, 4),
                Arguments.of("digest flag not negotiated", 1, Pdu.FLAG_HDGST | Pdu.FLAG_LAST_PDU,
                        FatalErrorStatus.INVALID_HEADER_FIELD, 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedHeaderEndsConnectionWithTermReq(String what, int at, int value, FatalErrorStatus fes, int fei) {
        Recorder r = new Recorder(false, false);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf pdu = h2cData(64, false, false, (byte) 1);
        if (at == 4) {
            pdu.setIntLE(4, value);
        } else {
            pdu.setByte(at, value);
        }
        ch.writeInbound(pdu);
        ByteBuf term = ch.readOutbound();
        assertEquals(PduType.C2H_TERM_REQ.code, term.getUnsignedByte(0));
        assertEquals(24, term.getUnsignedByte(2));
        assertEquals(fes.code, term.getUnsignedShortLE(TermReqPdu.FES_OFFSET));
        assertEquals(fei, term.getIntLE(TermReqPdu.FEI_OFFSET));
        // the offending header follows the TermReq header
        assertEquals(term.getUnsignedIntLE(4), term.readableBytes());
        assertEquals(value & 0xff, term.getUnsignedByte(24 + at));
        term.release();
        assertTrue(r.seen.isEmpty());
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void dataDigestMismatchIsReportedNotFatal() {
        Recorder r = new Recorder(false, true);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf pdu = h2cData(16, false, true, (byte) 1);
        pdu.setByte(24 + 16, pdu.getByte(24 + 16) ^ 0x55);
        ch.writeInbound(pdu);
        ch.writeInbound(h2cData(16, false, true, (byte) 2));
        assertEquals(List.of("H2C_DATA:16:1:bad-ddgst", "H2C_DATA:16:2"), r.seen);
        assertNull(ch.readOutbound());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void headerDigestMismatchIsFatal() {
        Recorder r = new Recorder(true, false);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf pdu = h2cData(16, true, false, (byte) 1);
        pdu.setByte(24, pdu.getByte(24) ^ 0x55);
        ch.writeInbound(pdu);
        ByteBuf term = ch.readOutbound();
        assertEquals(FatalErrorStatus.HEADER_DIGEST_ERROR.code, term.getUnsignedShortLE(TermReqPdu.FES_OFFSET));
        term.release();
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void peerTerminationClosesWithoutAnswer() {
        Recorder r = new Recorder(false, false);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf term = Unpooled.buffer();
        term.writeByte(PduType.H2C_TERM_REQ.code).writeByte(0).writeByte(24).writeByte(0).writeIntLE(24 + 8)
                .writeShortLE(FatalErrorStatus.PDU_SEQUENCE_ERROR.code).writeIntLE(3).writeZero(10).writeZero(8);
        ch.writeInbound(term);
        assertEquals(List.of("TERM:PDU_SEQUENCE_ERROR:3"), r.seen);
        assertNull(ch.readOutbound());
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    /** A bug in the handler closes the connection; no PDU is handed over again, not even at close. */
    @Test
    void handlerExceptionEndsDecoding() {
        Recorder r = new Recorder(false, false);
        r.explode = true;
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf two = Unpooled.buffer();
        ByteBuf a = h2cData(16, false, false, (byte) 1);
        ByteBuf b = h2cData(16, false, false, (byte) 2);
        two.writeBytes(a).writeBytes(b);
        a.release();
        b.release();
        try {
            ch.writeInbound(two);
        } catch (IllegalStateException expected) {
            // EmbeddedChannel rethrows what reached the end of the pipeline
        }
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
        assertEquals(List.of("boom"), r.seen);
    }

    /** Data goes from the buffers that came off the socket straight to its destination: no cumulation, no copy before. */
    @Test
    void dataIsHandedOverFromTheInboundBuffersAsItArrives() {
        Recorder r = new Recorder(true, true);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf pdu = h2cData(4000, true, true, (byte) 5);
        List<ByteBuf> sent = new ArrayList<>();
        // header and part of the data, then the data in three pieces, the last with the digest
        for (int cut : new int[] {40, 1000, 3000, pdu.readableBytes()}) {
            ByteBuf piece = pdu.readRetainedSlice(cut - pdu.readerIndex());
            sent.add(piece);
            ch.writeInbound(piece.retain());
        }
        assertEquals(List.of("H2C_DATA:4000:5"), r.seen);
        assertEquals(sent, r.sources, "each chunk of data is read from the buffer it arrived in");
        // the slices share the PDU's count: ours and the test's own, none held by the reader
        assertEquals(1 + sent.size(), pdu.refCnt(), "the reader keeps no reference to what it read");
        sent.forEach(ByteBuf::release);
        assertTrue(pdu.release());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    /** While paused the reader stops at a PDU boundary, keeps the rest, and goes on from there when resumed. */
    @Test
    void pausedReaderKeepsTheRestUntilResumed() {
        Recorder r = new Recorder(false, false);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        ByteBuf three = Unpooled.buffer();
        for (int i = 1; i <= 3; i++) {
            ByteBuf p = h2cData(64 * i, false, false, (byte) i);
            three.writeBytes(p);
            p.release();
        }
        // the first PDU whole, the second in part: pause before the third is read
        ch.writeInbound(three.readRetainedSlice(24 + 64 + 10));
        r.hold = true;
        ch.writeInbound(three.readRetainedSlice(24 + 128 - 10 + 5));
        assertEquals(List.of("H2C_DATA:64:1", "H2C_DATA:128:2"), r.seen);
        ch.writeInbound(three.readRetainedSlice(three.readableBytes()));
        assertEquals(2, r.seen.size(), "nothing is read while paused");
        r.release(ch.pipeline().firstContext());
        assertEquals(List.of("H2C_DATA:64:1", "H2C_DATA:128:2", "H2C_DATA:192:3"), r.seen);
        three.release();
        assertTrue(ch.isOpen());
        assertFalse(ch.finishAndReleaseAll());
    }

    /** Bytes kept while paused are released when the connection ends. */
    @Test
    void keptBytesAreReleasedAtClose() {
        Recorder r = new Recorder(false, false);
        EmbeddedChannel ch = new EmbeddedChannel(r);
        r.hold = true;
        ByteBuf pdu = h2cData(64, false, false, (byte) 1);
        ch.writeInbound(pdu.retain());
        assertEquals(2, pdu.refCnt(), "kept while paused");
        ch.close();
        assertEquals(1, pdu.refCnt());
        pdu.release();
        assertTrue(r.seen.isEmpty());
    }

    @Test
    void crc32cKnownValue() {
        // RFC 3720 B.4: CRC32C of 32 bytes of zeros is 0x8a9136aa.
        ByteBuf zeros = Unpooled.directBuffer(32).writeZero(32);
        assertEquals(0x8a9136aa, new Crc32c().compute(zeros, 0, 32));
        zeros.release();
    }
}
