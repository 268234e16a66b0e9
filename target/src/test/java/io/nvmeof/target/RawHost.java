package io.nvmeof.target;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tcp.ICReqPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tcp.DataPdu;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * A deliberately simple NVMe/TCP host over a blocking socket, written from the spec and
 * independent of the initiator, to drive the target PDU by PDU (including wrong ones).
 */
public final class RawHost implements AutoCloseable {
    public static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    static final UUID HOST_ID = UUID.fromString("11111111-2222-3333-4444-555555555555");

    final Socket socket;
    final DataInputStream in;
    final OutputStream out;
    int cid = 1;
    boolean headerDigest;
    boolean dataDigest;

    /** A received PDU: its whole bytes, little-endian. */
    public record Received(PduType type, ByteBuffer bytes) {
        public int u8(int at) {
            return bytes.get(at) & 0xff;
        }

        public int u16(int at) {
            return bytes.getShort(at) & 0xffff;
        }

        public long u32(int at) {
            return bytes.getInt(at) & 0xffffffffL;
        }

        public CompletionQueueEntry cqe() {
            if (type != PduType.CAPSULE_RESP) {
                throw new AssertionError("expected a response capsule, got " + type);
            }
            return new CompletionQueueEntry().wrap(bytes, 8);
        }
    }

    public RawHost(InetSocketAddress target) throws IOException {
        this(target, null);
    }

    /** A host that first opens NVMe/TCP's secure channel with {@code tls} (null: in the clear). */
    public RawHost(InetSocketAddress target, org.bouncycastle.tls.TlsClient tls) throws IOException {
        socket = new Socket();
        socket.connect(target, 5000);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        if (tls != null) {
            org.bouncycastle.tls.TlsClientProtocol p = new org.bouncycastle.tls.TlsClientProtocol(socket.getInputStream(),
                    socket.getOutputStream());
            p.connect(tls);
            in = new DataInputStream(p.getInputStream());
            out = p.getOutputStream();
        } else {
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }
    }

    public void send(ByteBuffer pdu) throws IOException {
        byte[] b = new byte[pdu.remaining()];
        pdu.duplicate().get(b);
        out.write(b);
        out.flush();
    }

    public Received receive() throws IOException {
        byte[] ch = new byte[8];
        in.readFully(ch);
        ByteBuffer h = ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN);
        int plen = h.getInt(4);
        if (plen < 8 || plen > (64 << 20)) {
            throw new IOException("bad PLEN " + plen);
        }
        byte[] all = new byte[plen];
        System.arraycopy(ch, 0, all, 0, 8);
        in.readFully(all, 8, plen - 8);
        return new Received(PduType.of(ch[0]), ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN));
    }

    /** True if the target closed the connection (EOF) within the socket timeout. */
    public boolean closedByPeer() throws IOException {
        try {
            int b = in.read();
            return b < 0;
        } catch (EOFException e) {
            return true;
        } catch (SocketException e) {
            return true;
        }
    }

    public Received icreq() throws IOException {
        return icreq(0, false, false);
    }

    /** ICReq with the given HPDA and digests; later capsules carry the digests. */
    public Received icreq(int hpda, boolean hd, boolean dd) throws IOException {
        ByteBuffer b = Flyweight.allocate(128);
        new ICReqPdu().<ICReqPdu>wrap(b, 0).encode(hpda, hd, dd, 0);
        send(b);
        headerDigest = hd;
        dataDigest = dd;
        return receive();
    }

    static int crc32c(ByteBuffer b, int from, int len) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate().position(from).limit(from + len));
        return (int) c.getValue();
    }

    /** A command capsule with optional in-capsule data; the SQE is prepared by {@code fill}. */
    public ByteBuffer capsule(Consumer<SubmissionQueueEntry> fill, byte[] inCapsule) {
        int dataLen = inCapsule == null ? 0 : inCapsule.length;
        int hdr = 72 + (headerDigest ? 4 : 0);
        boolean dd = dataDigest && dataLen > 0;
        int plen = hdr + dataLen + (dd ? 4 : 0);
        ByteBuffer b = Flyweight.allocate(plen);
        Pdu p = new Pdu().wrap(b, 0);
        p.init(PduType.CAPSULE_CMD, (headerDigest ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0),
                dataLen > 0 ? hdr : 0, plen);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(b, 8);
        fill.accept(sqe);
        if (sqe.cid() == 0) {
            sqe.cid(cid++);
        }
        if (headerDigest) {
            b.putInt(72, crc32c(b, 0, 72));
        }
        if (dataLen > 0) {
            b.put(hdr, inCapsule);
            if (dd) {
                b.putInt(hdr + dataLen, crc32c(b, hdr, dataLen));
            }
        }
        return b;
    }

    public Received command(Consumer<SubmissionQueueEntry> fill, byte[] inCapsule) throws IOException {
        send(capsule(fill, inCapsule));
        return receive();
    }

    /** The host this one connects as (bringUpAdmin and bringUpIo): {@link #HOST_NQN} and {@link #HOST_ID} unless set. */
    private String hostNqn = HOST_NQN;
    private UUID hostId = HOST_ID;

    public RawHost as(String nqn, UUID id) {
        this.hostNqn = nqn;
        this.hostId = id;
        return this;
    }

    /** Connect data of host {@code hostnqn}: its Host Identifier is {@link #HOST_ID} for {@link #HOST_NQN}, one of its own for another. */
    public static byte[] connectData(String subnqn, String hostnqn, int cntlid) {
        return connectData(subnqn, hostnqn, cntlid, idOf(hostnqn));
    }

    static UUID idOf(String hostnqn) {
        return hostnqn.equals(HOST_NQN) ? HOST_ID : UUID.nameUUIDFromBytes(hostnqn.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    public static byte[] connectData(String subnqn, String hostnqn, int cntlid, UUID hostId) {
        ByteBuffer d = Flyweight.allocate(1024);
        new ConnectData().<ConnectData>wrap(d, 0).hostId(hostId).cntlid(cntlid).subsystemNqn(subnqn).hostNqn(hostnqn);
        byte[] b = new byte[1024];
        d.get(0, b);
        return b;
    }

    public Received connect(int qid, String subnqn, String hostnqn, int cntlid) throws IOException {
        return connect(qid, 32, subnqn, hostnqn, cntlid);
    }

    public Received connect(int qid, int queueSize, String subnqn, String hostnqn, int cntlid) throws IOException {
        return command(s -> s.connect(qid, queueSize, 0, qid == 0 ? 5000 : 0).sgl(0, 1024, Sgl.IN_CAPSULE),
                connectData(subnqn, hostnqn, cntlid, hostnqn.equals(this.hostNqn) ? hostId : idOf(hostnqn)));
    }

    /** ICReq, admin Connect, CC.EN and CSTS.RDY; returns the cntlid. */
    public int bringUpAdmin(String subnqn) throws IOException {
        icreq();
        CompletionQueueEntry cqe = connect(0, subnqn, hostNqn, 0xffff).cqe();
        if (!cqe.status().isSuccess()) {
            throw new IOException("Connect failed: " + cqe.status());
        }
        int cntlid = cqe.dw0() & 0xffff;
        CompletionQueueEntry set = command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe();
        if (!set.status().isSuccess()) {
            throw new IOException("Property Set failed: " + set.status());
        }
        return cntlid;
    }

    /** ICReq and I/O queue Connect for an existing controller. */
    public void bringUpIo(String subnqn, int qid, int cntlid) throws IOException {
        bringUpIo(subnqn, qid, cntlid, 32);
    }

    /** ICReq and I/O queue Connect, {@code queueSize} entries, for an existing controller. */
    public void bringUpIo(String subnqn, int qid, int cntlid, int queueSize) throws IOException {
        icreq();
        CompletionQueueEntry cqe = connect(qid, queueSize, subnqn, hostNqn, cntlid).cqe();
        if (!cqe.status().isSuccess()) {
            throw new IOException("I/O Connect failed: " + cqe.status());
        }
    }

    /** Answers an R2T with all its data in one H2CData PDU (digests as negotiated). */
    public void answer(Received r2t, byte[] data) throws IOException {
        int n = (int) r2t.u32(R2TPdu.R2TL_OFFSET);
        int hdr = DataPdu.SIZE + (headerDigest ? 4 : 0);
        boolean dd = dataDigest && n > 0;
        ByteBuffer b = Flyweight.allocate(hdr + n + (dd ? 4 : 0));
        new DataPdu().<DataPdu>wrap(b, 0).encode(PduType.H2C_DATA, Pdu.FLAG_LAST_PDU, r2t.u16(R2TPdu.CCCID_OFFSET),
                r2t.u16(R2TPdu.TTAG_OFFSET), r2t.u32(R2TPdu.R2TO_OFFSET), n, headerDigest, dd);
        if (headerDigest) {
            b.putInt(DataPdu.SIZE, crc32c(b, 0, DataPdu.SIZE));
        }
        b.put(hdr, data, (int) r2t.u32(R2TPdu.R2TO_OFFSET), n);
        if (dd) {
            b.putInt(hdr + n, crc32c(b, hdr, n));
        }
        send(b);
    }

    public static void keepAlive(SubmissionQueueEntry s) {
        s.opcode(AdminOpcode.KEEP_ALIVE.code).psdt(1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
