package io.nvmeof.nbd;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * An NBD client that says exactly what a test tells it to, in the bytes of the protocol: for
 * the server's answers to well-formed, odd and hostile input alike. Blocking; one request at a
 * time unless the test sends several before reading.
 */
final class RawNbdClient implements AutoCloseable {
    final SocketChannel ch;

    RawNbdClient(SocketAddress address) throws IOException {
        ch = address instanceof UnixDomainSocketAddress ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        ch.connect(address);
    }

    ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new java.io.EOFException("server closed after " + b.position() + " of " + n + " bytes");
            }
        }
        return b.flip();
    }

    /** True once the server has closed: reading gives end of stream. */
    boolean closedByServer() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(1);
        try {
            return ch.read(b) < 0;
        } catch (IOException e) {
            return true; // reset
        }
    }

    void send(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Reads the greeting; returns its handshake flags. */
    int greeting() throws IOException {
        ByteBuffer g = read(18);
        if (g.getLong() != NbdProtocol.NBDMAGIC || g.getLong() != NbdProtocol.IHAVEOPT) {
            throw new IOException("bad greeting");
        }
        return g.getShort() & 0xffff;
    }

    void clientFlags(int flags) throws IOException {
        send(ByteBuffer.allocate(4).putInt(flags).flip());
    }

    void option(int option, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(16 + data.length);
        b.putLong(NbdProtocol.IHAVEOPT).putInt(option).putInt(data.length).put(data);
        send(b.flip());
    }

    /** One option reply: {type, data}. */
    record OptionReply(int option, int type, byte[] data) {
        String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    OptionReply optionReply() throws IOException {
        ByteBuffer h = read(20);
        if (h.getLong() != NbdProtocol.OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic");
        }
        int option = h.getInt();
        int type = h.getInt();
        int length = h.getInt();
        byte[] data = new byte[length];
        read(length).get(data);
        return new OptionReply(option, type, data);
    }

    static byte[] infoRequest(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length);
        b.putInt(n.length).put(n).putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.array();
    }

    /** Fixed newstyle, structured replies if asked, NBD_OPT_GO on the default export: returns the transmission flags. */
    int negotiate(boolean structured) throws IOException {
        greeting();
        clientFlags(NbdProtocol.CLIENT_FIXED_NEWSTYLE | NbdProtocol.CLIENT_NO_ZEROES);
        if (structured) {
            option(NbdProtocol.OPT_STRUCTURED_REPLY, new byte[0]);
            if (optionReply().type() != NbdProtocol.REP_ACK) {
                throw new IOException("structured replies refused");
            }
        }
        option(NbdProtocol.OPT_GO, infoRequest("", NbdProtocol.INFO_BLOCK_SIZE));
        int flags = -1;
        for (;;) {
            OptionReply r = optionReply();
            if (r.type() == NbdProtocol.REP_ACK) {
                return flags;
            }
            if (r.type() != NbdProtocol.REP_INFO) {
                throw new IOException("GO refused: 0x" + Integer.toHexString(r.type()));
            }
            ByteBuffer d = ByteBuffer.wrap(r.data());
            if (d.getShort() == NbdProtocol.INFO_EXPORT) {
                d.getLong();
                flags = d.getShort() & 0xffff;
            }
        }
    }

    void request(int flags, int type, long handle, long offset, int length, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(28 + (payload == null ? 0 : payload.length));
        b.putInt(NbdProtocol.REQUEST_MAGIC).putShort((short) flags).putShort((short) type).putLong(handle).putLong(offset)
                .putInt(length);
        if (payload != null) {
            b.put(payload);
        }
        send(b.flip());
    }

    /** A reply: its handle, error and (a read's) data. */
    record Reply(long handle, int error, byte[] data, String message) {
    }

    /** A simple reply; {@code readLength} bytes of data follow a successful read's. */
    Reply simpleReply(int readLength) throws IOException {
        ByteBuffer h = read(16);
        if (h.getInt() != NbdProtocol.SIMPLE_REPLY_MAGIC) {
            throw new IOException("bad simple reply magic");
        }
        int error = h.getInt();
        long handle = h.getLong();
        byte[] data = new byte[error == 0 ? readLength : 0];
        read(data.length).get(data);
        return new Reply(handle, error, data, null);
    }

    /** A structured reply of one chunk (DONE), as this server sends them. */
    Reply structuredReply() throws IOException {
        ByteBuffer h = read(20);
        if (h.getInt() != NbdProtocol.STRUCTURED_REPLY_MAGIC) {
            throw new IOException("bad structured reply magic");
        }
        int flags = h.getShort() & 0xffff;
        int type = h.getShort() & 0xffff;
        long handle = h.getLong();
        int length = h.getInt();
        ByteBuffer p = read(length);
        if ((flags & NbdProtocol.REPLY_FLAG_DONE) == 0) {
            throw new IOException("a chunk without DONE: this server sends one per reply");
        }
        switch (type) {
            case NbdProtocol.REPLY_TYPE_NONE:
                return new Reply(handle, 0, new byte[0], null);
            case NbdProtocol.REPLY_TYPE_OFFSET_DATA: {
                p.getLong();
                byte[] data = new byte[length - 8];
                p.get(data);
                return new Reply(handle, 0, data, null);
            }
            case NbdProtocol.REPLY_TYPE_ERROR: {
                int error = p.getInt();
                byte[] m = new byte[p.getShort() & 0xffff];
                p.get(m);
                return new Reply(handle, error, new byte[0], new String(m, StandardCharsets.UTF_8));
            }
            default:
                throw new IOException("chunk type " + type);
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
