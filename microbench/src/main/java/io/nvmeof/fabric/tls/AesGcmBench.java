package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What sealing one TLS 1.3 record costs (AES-128-GCM, the suite of SHA-256 PSKs), at the
 * record sizes NVMe/TCP makes: 73 bytes (a command capsule or a response), 4,145 (a 4 KiB read's
 * data PDU and its response, gathered by one flush) and 16,385 (a full record, as 128 KiB
 * transfers make). {@code jvm}: the JVM's own AES-GCM as a TLS stack on it would run it, a new
 * nonce per record through {@code Cipher.init}, heap arrays; the yardstick of issue 31's goal 3.
 * {@code ours}: our record layer's cipher, sealing a pooled direct buffer in place (OpenSSL's
 * where libcrypto loads); {@code oursJdk}: our fallback on the JDK's. Opening costs about the
 * same. Run: {@code java -jar microbench/build/benchmarks.jar AesGcmBench} (add
 * {@code -jvmArgs -Xmx1g} for the 256 MiB of {@code memory}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AesGcmBench {
    @Param({"73", "4145", "16385"})
    int record;

    /**
     * Where the plaintext is: {@code cache}, one record's buffer sealed over and over (hot in the
     * CPU's caches); {@code memory}, the next record-sized slice of 256 MiB each time, as a RAM
     * namespace's data arrives at the target's record layer (from DRAM).
     */
    @Param({"cache", "memory"})
    String source;

    private static final int SPAN = 256 << 20;
    private int slots;
    private int slot;

    private final byte[] key = new byte[16];
    private final byte[] iv = new byte[12];
    private SecretKeySpec spec;
    private Cipher jdk;
    private byte[] heap;
    private long seq;
    private RecordCipher ours;
    private RecordCipher oursJdk;
    private ByteBuf direct;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        new Random(1).nextBytes(key);
        spec = new SecretKeySpec(key, "AES");
        jdk = Cipher.getInstance("AES/GCM/NoPadding");
        int size = 5 + record + 16;
        slots = source.equals("memory") ? SPAN / size : 1;
        heap = new byte[slots * size];
        ours = RecordCipher.create(true, key, iv, false);
        oursJdk = RecordCipher.create(true, key, iv, true);
        direct = Unpooled.directBuffer(slots * size);
        direct.writerIndex(slots * size);
        System.out.println("\nours: " + ours.provider());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ours.close();
        oursJdk.close();
        direct.release();
    }

    @Benchmark
    public int jvm() throws Exception {
        long s = seq++;
        iv[11] = (byte) s;
        iv[10] = (byte) (s >>> 8);
        iv[9] = (byte) (s >>> 16);
        jdk.init(Cipher.ENCRYPT_MODE, spec, new GCMParameterSpec(128, iv));
        int at = next();
        jdk.updateAAD(heap, at, 5);
        return jdk.doFinal(heap, at + 5, record, heap, at + 5);
    }

    private int next() {
        int s = slot;
        slot = s + 1 == slots ? 0 : s + 1;
        return s * (5 + record + 16);
    }

    @Benchmark
    public ByteBuf ours() {
        ours.seal(direct, next(), record, seq++);
        return direct;
    }

    @Benchmark
    public ByteBuf oursJdk() {
        oursJdk.seal(direct, next(), record, seq++);
        return direct;
    }
}
