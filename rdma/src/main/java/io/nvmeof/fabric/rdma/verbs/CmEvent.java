package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What this provider keeps of one {@code struct rdma_cm_event}, copied before the event is
 * acknowledged (the library frees it then). For CONNECT_REQUEST and ESTABLISHED the kernel
 * reports the peer's depths from this side's point of view: {@code initiatorDepth} is how many
 * RDMA READs this side may issue (the peer's responder resources), {@code responderResources}
 * how many the peer will issue.
 *
 * <p>On InfiniBand and RoCE the private data is the whole private-data field of the CM message
 * (CONNECT_REQUEST 56 bytes, accept 196, reject 148), padded with zeros after what the peer
 * sent; iWARP reports the exact length.
 */
record CmEvent(int type, int status, long id, long listenId, byte[] privateData, int responderResources,
               int initiatorDepth) {

    static CmEvent read(long event) {
        int type = MEM.getInt(event + Abi.CM_EVENT_EVENT);
        long conn = event + Abi.CM_EVENT_CONN;
        byte[] data = null;
        int rr = 0;
        int id = 0;
        if (type == Abi.EV_CONNECT_REQUEST || type == Abi.EV_ESTABLISHED || type == Abi.EV_REJECTED
                || type == Abi.EV_CONNECT_RESPONSE) {
            long p = MEM.getAddress(conn + Abi.CONN_PRIVATE_DATA);
            int len = MEM.getByte(conn + Abi.CONN_PRIVATE_DATA_LEN) & 0xff;
            if (p != 0 && len > 0) {
                data = Native.bytes(p, len);
            }
            rr = MEM.getByte(conn + Abi.CONN_RESPONDER_RESOURCES) & 0xff;
            id = MEM.getByte(conn + Abi.CONN_INITIATOR_DEPTH) & 0xff;
        }
        return new CmEvent(type, MEM.getInt(event + Abi.CM_EVENT_STATUS), MEM.getAddress(event + Abi.CM_EVENT_ID),
                MEM.getAddress(event + Abi.CM_EVENT_LISTEN_ID), data, rr, id);
    }

    /** The private data as a read-only little-endian buffer, or null when there is none. */
    ByteBuffer privateDataBuffer() {
        return privateData == null ? null : ByteBuffer.wrap(privateData).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    String name() {
        return Abi.eventName(type);
    }

    /** "REJECTED (status 28)". */
    String describe() {
        return name() + " (status " + status + ")";
    }
}
