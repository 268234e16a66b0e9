package io.nvmeof.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.testing.EmbeddedTarget;
import io.nvmeof.testing.NvmeofTarget;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

@NvmeofTarget(namespaces = "16MiB")
class RecordStoreTest {

    @Test
    void reconnectsAfterADroppedConnectionAndKeepsEveryRecord(EmbeddedTarget target) throws Exception {
        try (RecordStore store = new RecordStore(target.uri())) {
            for (int i = 0; i < 100; i++) {
                store.put(i, record(store, i));
                if (i == 49) {
                    target.dropConnections(); // the network fails half way
                }
            }
            assertEquals(1, store.reconnects());
            for (int i = 0; i < 100; i++) {
                assertArrayEquals(record(store, i), store.get(i), "record " + i);
            }
        }
    }

    @Test
    void aWriteFaultIsRetriedAndAWriteProtectedVolumeIsNot(EmbeddedTarget target) throws Exception {
        try (RecordStore store = new RecordStore(target.uri())) {
            target.failNext(NvmOpcode.WRITE.code, 2, Status.WRITE_FAULT); // transient: no DNR
            store.put(7, record(store, 7));
            assertArrayEquals(record(store, 7), store.get(7));
            assertEquals(0, store.reconnects());

            target.namespace(1).readOnly(true); // final: Namespace is Write Protected has DNR
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> store.put(8, record(store, 8)));
            assertEquals(Status.NAMESPACE_WRITE_PROTECTED, e.status());
        }
    }

    private static byte[] record(RecordStore store, int i) {
        byte[] r = new byte[store.recordSize()];
        Arrays.fill(r, (byte) i);
        return r;
    }
}
