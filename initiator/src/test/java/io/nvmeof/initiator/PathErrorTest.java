package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.Status;
import org.junit.jupiter.api.Test;

/** Which statuses a multipath set retries on another path, and which are the caller's. */
class PathErrorTest {
    @Test
    void pathErrorsFailOverAndTheRestReachTheCaller() {
        // path related (SCT 3h) without DNR: the ANA states and the path errors
        for (Status s : new Status[] {Status.INTERNAL_PATH_ERROR, Status.ANA_PERSISTENT_LOSS, Status.ANA_INACCESSIBLE,
                Status.ANA_TRANSITION, Status.of(Status.SCT_PATH, 0x60, false, false), Status.of(Status.SCT_PATH, 0x70, false, false)}) {
            assertTrue(Multipath.pathError(s), s.name());
            assertFalse(Multipath.pathError(s.withDnr(true)), s.name() + " with DNR");
        }
        // the queue rather than the data
        assertTrue(Multipath.pathError(Status.ABORTED_SQ_DELETION));
        assertTrue(Multipath.pathError(Status.TRANSIENT_TRANSPORT_ERROR));
        // the caller's: media errors, range, reservation conflicts, anything else, anything with DNR
        for (Status s : new Status[] {Status.UNRECOVERED_READ_ERROR, Status.WRITE_FAULT, Status.LBA_OUT_OF_RANGE,
                Status.of(Status.SCT_GENERIC, 0x83, false, true), Status.INTERNAL_ERROR, Status.INVALID_FIELD,
                Status.NAMESPACE_WRITE_PROTECTED, Status.SUCCESS, Status.ABORTED_SQ_DELETION.withDnr(true)}) {
            assertFalse(Multipath.pathError(s), s.name());
        }
    }

    @Test
    void policiesHaveLinuxNames() {
        assertEquals("numa", Multipath.Policy.NUMA.label());
        assertEquals("round-robin", Multipath.Policy.ROUND_ROBIN.label());
        assertEquals("queue-depth", Multipath.Policy.QUEUE_DEPTH.label());
        for (Multipath.Policy p : Multipath.Policy.values()) {
            assertEquals(p, Multipath.Policy.of(p.label()));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Multipath.Policy.of("service-time"));
        assertTrue(e.getMessage().contains("numa, round-robin, queue-depth"), e.getMessage());
    }
}
