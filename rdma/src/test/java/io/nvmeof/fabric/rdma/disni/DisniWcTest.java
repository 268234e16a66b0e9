package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.WorkCompletion;
import org.junit.jupiter.api.Test;

/**
 * The numbers DiSNI hands over are libibverbs' and librdmacm's, which the SPI uses too: checked
 * against DiSNI's own (pure Java) enums and constants, so a different DiSNI jar cannot shift them
 * unnoticed.
 */
class DisniWcTest {
    @Test
    void statusesAreIbvWcStatusNumbers() {
        assertEquals(WorkCompletion.SUCCESS, IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal());
        assertEquals(WorkCompletion.LOC_LEN_ERR, IbvWC.IbvWcStatus.IBV_WC_LOC_LEN_ERR.ordinal());
        assertEquals(WorkCompletion.LOC_QP_OP_ERR, IbvWC.IbvWcStatus.IBV_WC_LOC_QP_OP_ERR.ordinal());
        assertEquals(WorkCompletion.LOC_PROT_ERR, IbvWC.IbvWcStatus.IBV_WC_LOC_PROT_ERR.ordinal());
        assertEquals(WorkCompletion.WR_FLUSH_ERR, IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal());
        assertEquals(WorkCompletion.REM_INV_REQ_ERR, IbvWC.IbvWcStatus.IBV_WC_REM_INV_REQ_ERR.ordinal());
        assertEquals(WorkCompletion.REM_ACCESS_ERR, IbvWC.IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal());
        assertEquals(WorkCompletion.REM_OP_ERR, IbvWC.IbvWcStatus.IBV_WC_REM_OP_ERR.ordinal());
        assertEquals(WorkCompletion.RETRY_EXC_ERR, IbvWC.IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal());
        assertEquals(WorkCompletion.RNR_RETRY_EXC_ERR, IbvWC.IbvWcStatus.IBV_WC_RNR_RETRY_EXC_ERR.ordinal());
    }

    @Test
    void opcodesAreIbvWcOpcodeNumbers() {
        assertEquals(WorkCompletion.SEND, IbvWC.IbvWcOpcode.IBV_WC_SEND.getOpcode());
        assertEquals(WorkCompletion.RDMA_WRITE, IbvWC.IbvWcOpcode.IBV_WC_RDMA_WRITE.getOpcode());
        assertEquals(WorkCompletion.RDMA_READ, IbvWC.IbvWcOpcode.IBV_WC_RDMA_READ.getOpcode());
        assertEquals(WorkCompletion.RECV, IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode());
        assertEquals(DisniWc.WC_RECV_RDMA_WITH_IMM, IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode());
        for (IbvWC.IbvWcOpcode o : IbvWC.IbvWcOpcode.values()) {
            int spi = DisniWc.spiOpcode(o.getOpcode());
            switch (o) {
                case IBV_WC_SEND -> assertEquals(WorkCompletion.SEND, spi);
                case IBV_WC_RDMA_WRITE -> assertEquals(WorkCompletion.RDMA_WRITE, spi);
                case IBV_WC_RDMA_READ -> assertEquals(WorkCompletion.RDMA_READ, spi);
                case IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM -> assertEquals(WorkCompletion.RECV, spi);
                default -> assertEquals(-1, spi, o.name());
            }
        }
    }

    @Test
    void workRequestOpcodesAndFlagsAreLibibverbs() {
        assertEquals(0, IbvSendWR.IBV_WR_RDMA_WRITE);
        assertEquals(2, IbvSendWR.IBV_WR_SEND);
        assertEquals(4, IbvSendWR.IBV_WR_RDMA_READ);
        assertEquals(2, IbvSendWR.IBV_SEND_SIGNALED);
        assertEquals(9, DisniWc.WR_SEND_WITH_INV);
        assertEquals(48, IbvWC.CSIZE, "sizeof(struct ibv_wc) on 64-bit Linux");
    }

    @Test
    void accessFlagsAreLibibverbs() {
        assertEquals(MemoryRegion.LOCAL_WRITE, com.ibm.disni.verbs.IbvMr.IBV_ACCESS_LOCAL_WRITE);
        assertEquals(MemoryRegion.REMOTE_WRITE, com.ibm.disni.verbs.IbvMr.IBV_ACCESS_REMOTE_WRITE);
        assertEquals(MemoryRegion.REMOTE_READ, com.ibm.disni.verbs.IbvMr.IBV_ACCESS_REMOTE_READ);
    }

    @Test
    void cmEventsAreRdmaCmNumbers() {
        for (RdmaCmEvent.EventType t : RdmaCmEvent.EventType.values()) {
            assertEquals(t.name(), CmEvents.name(t.ordinal()));
        }
        assertEquals(CmEvents.CONNECT_REQUEST, RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal());
        assertEquals(CmEvents.REJECTED, RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal());
        assertEquals(CmEvents.ESTABLISHED, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal());
        assertEquals(CmEvents.DISCONNECTED, RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal());
        assertEquals(CmEvents.TIMEWAIT_EXIT, RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT.ordinal());
        assertEquals("RDMA CM event 99", CmEvents.name(99));
        assertTrue(CmEvents.isConnectFailure(CmEvents.REJECTED));
        assertTrue(CmEvents.isConnectFailure(CmEvents.UNREACHABLE));
        assertFalse(CmEvents.isConnectFailure(CmEvents.ESTABLISHED));
        assertFalse(CmEvents.isConnectFailure(CmEvents.DISCONNECTED));
    }

    @Test
    void invalidatedKeyOnlyForASuccessfulReceiveWithTheFlag() {
        assertEquals(0xdeadbeefL, DisniWc.invalidatedRkey(WorkCompletion.SUCCESS, DisniWc.WC_WITH_INV, 0xdeadbeef));
        assertEquals(-1, DisniWc.invalidatedRkey(WorkCompletion.SUCCESS, 0, 0x1234));
        assertEquals(-1, DisniWc.invalidatedRkey(WorkCompletion.SUCCESS, 1 << 1, 0x1234), "IBV_WC_WITH_IMM is not it");
        assertEquals(-1, DisniWc.invalidatedRkey(WorkCompletion.WR_FLUSH_ERR, DisniWc.WC_WITH_INV, 0x1234),
                "a failed completion's other fields are stale in DiSNI");
    }

    @Test
    void failureMessages() {
        assertEquals("RDMA WRITE failed: remote access error (ibv_wc_status 10)",
                WorkCompletion.failure(WorkCompletion.RDMA_WRITE, WorkCompletion.REM_ACCESS_ERR));
    }
}
