package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shared object that reservations across gateways are built on, against a real cluster: a
 * compare-and-swap that only one writer of a version wins, two clients (two gateways) counting to
 * 400 through it with no increment lost, and a watch on one client hearing what the other
 * notifies, with the time it takes.
 */
class RadosObjectTest {
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    private static RbdCluster client() throws Exception {
        RbdCluster c = RbdCluster.connect(new RbdCluster.Key(CEPH.get().conf().toString(), null), 10_000, 10_000);
        c.retire(); // the next connect makes another client: two gateways
        return c;
    }

    @Test
    void onlyOneWriterOfAVersionWins() throws Exception {
        RbdCluster c = client();
        try {
            RadosObject o = new RadosObject(c, "rbd", "cas-one");
            assertEquals(0, o.read().version(), "not there yet");
            assertTrue(o.compareAndSet(0, bytes("a")));
            assertFalse(o.compareAndSet(0, bytes("b")), "created already");
            assertEquals(1, o.read().version());
            assertArrayEquals(bytes("a"), o.read().data());
            assertTrue(o.compareAndSet(1, bytes("c")));
            assertFalse(o.compareAndSet(1, bytes("d")), "at version 2 now");
            assertFalse(o.compareAndSet(5, bytes("e")), "never at version 5");
            RadosObject.Versioned v = o.read();
            assertEquals(2, v.version());
            assertArrayEquals(bytes("c"), v.data());
            byte[] big = new byte[50_000];
            big[49_999] = 7;
            assertTrue(o.compareAndSet(2, big));
            assertArrayEquals(big, o.read().data(), "data past the first read's buffer");
        } finally {
            c.close();
        }
    }

    @Test
    void twoClientsCountingThroughItLoseNoIncrement() throws Exception {
        RbdCluster a = client();
        RbdCluster b = client();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            assertTrue(new RadosObject(a, "rbd", "cas-count").compareAndSet(0, count(0)));
            List<Future<Integer>> conflicts = new ArrayList<>();
            for (RbdCluster c : List.of(a, b)) {
                RadosObject o = new RadosObject(c, "rbd", "cas-count");
                conflicts.add(pool.submit(() -> {
                    int lost = 0;
                    for (int i = 0; i < 200; i++) {
                        while (true) {
                            RadosObject.Versioned v = o.read();
                            long n = ByteBuffer.wrap(v.data()).getLong();
                            if (o.compareAndSet(v.version(), count(n + 1))) {
                                break;
                            }
                            lost++;
                        }
                    }
                    return lost;
                }));
            }
            int retried = conflicts.get(0).get(120, TimeUnit.SECONDS) + conflicts.get(1).get(120, TimeUnit.SECONDS);
            RadosObject.Versioned end = new RadosObject(a, "rbd", "cas-count").read();
            assertEquals(400, ByteBuffer.wrap(end.data()).getLong(), "every increment counted");
            assertEquals(401, end.version());
            System.out.println("two clients, 400 increments: " + retried + " lost a race and retried");
        } finally {
            pool.shutdownNow();
            a.close();
            b.close();
        }
    }

    /**
     * A watcher that does not acknowledge is named in the notify's result by its client's global
     * id, and the notifier fences it by the address its watch published: that client's next
     * operation fails as fenced. A client does not hear its own notifies.
     */
    @Test
    void aWatcherThatDoesNotAnswerIsNamedAndFenced() throws Exception {
        RbdCluster a = client();
        RbdCluster b = client();
        try {
            RadosObject atA = new RadosObject(a, "rbd", "silent");
            RadosObject atB = new RadosObject(b, "rbd", "silent");
            assertTrue(atA.compareAndSet(0, bytes("v1")));
            BlockingQueue<byte[]> heardAtA = new LinkedBlockingQueue<>();
            BlockingQueue<byte[]> heardAtB = new LinkedBlockingQueue<>();
            try (RadosObject.Watch own = atA.watch((payload, ack) -> {
                heardAtA.add(payload);
                ack.run();
            }, err -> { });
                 RadosObject.Watch silent = atB.watch((payload, ack) -> heardAtB.add(payload), err -> { })) {
                long t0 = System.nanoTime();
                RadosObject.Notified n = atA.notify(bytes("change"), 1_000);
                long waited = (System.nanoTime() - t0) / 1_000_000;
                assertEquals(-Rbd.ETIMEDOUT, n.rc(), "b never acknowledged");
                assertEquals(List.of(b.instanceId()), n.missed(), "the notify names b's client, and only it");
                assertTrue(waited >= 900, "it waited out its timeout: " + waited + " ms");
                assertTrue(heardAtA.isEmpty(), "a does not hear its own notify");
                assertEquals(1, heardAtB.size(), "b heard it and did not answer");
                List<String> fenced = atA.fence(n.missed());
                assertEquals(List.of(b.address()), fenced);
                assertThrows(Rbd.Fenced.class, atB::read, "b, fenced, can do nothing in the cluster");
                assertEquals(1, atA.read().version(), "a goes on");
            }
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void aWatcherHearsWhatTheOtherClientNotifies() throws Exception {
        RbdCluster a = client();
        RbdCluster b = client();
        try {
            RadosObject atA = new RadosObject(a, "rbd", "watched");
            RadosObject atB = new RadosObject(b, "rbd", "watched");
            assertTrue(atA.compareAndSet(0, bytes("v1")));
            BlockingQueue<byte[]> heard = new LinkedBlockingQueue<>();
            BlockingQueue<Integer> broken = new LinkedBlockingQueue<>();
            List<Long> micros = new ArrayList<>();
            try (RadosObject.Watch w = atB.watch((payload, ack) -> {
                heard.add(payload);
                ack.run();
            }, broken::add)) {
                for (int i = 0; i < 30; i++) {
                    byte[] payload = bytes("change " + i);
                    long t0 = System.nanoTime();
                    RadosObject.Notified n = atA.notify(payload, 10_000);
                    assertEquals(0, n.rc(), "every watcher acknowledged");
                    assertEquals(List.of(), n.missed());
                    byte[] got = heard.poll(10, TimeUnit.SECONDS);
                    micros.add((System.nanoTime() - t0) / 1000);
                    assertArrayEquals(payload, got, "the watcher heard the payload");
                }
            }
            assertTrue(broken.isEmpty(), "the watch did not break: " + broken);
            assertEquals(0, atA.notify(bytes("after"), 2_000).rc(), "no watcher left to wait for");
            assertTrue(heard.isEmpty(), "a closed watch hears nothing");
            Collections.sort(micros);
            System.out.println("notify at one client, heard at the other (30): median " + micros.get(15) + " us, worst "
                    + micros.get(29) + " us");
        } finally {
            a.close();
            b.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] count(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }
}
