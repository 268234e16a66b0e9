package io.nvmeof.microbench;

import io.nvmeof.protocol.auth.DhGroup;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one DH-HMAC-CHAP exchange's Diffie-Hellman part costs the target, per group: a key pair
 * for the challenge, and the shared secret from the host's value once its reply comes. This is
 * the work a host that has proved nothing yet can make the target do, so it bounds what
 * {@code dhchap_dhgroups} should offer. Run:
 * {@code java -jar microbench/build/benchmarks.jar DhGroupBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DhGroupBench {
    @Param({"FFDHE2048", "FFDHE3072", "FFDHE4096", "FFDHE6144", "FFDHE8192"})
    public String group;

    private DhGroup g;
    private byte[] hostValue;
    private DhGroup.KeyPair keys;
    private final SecureRandom random = new SecureRandom();

    @Setup
    public void setUp() {
        g = DhGroup.valueOf(group);
        hostValue = g.generate(random).publicValue();
        keys = g.generate(random);
    }

    /** The challenge's key pair. */
    @Benchmark
    public DhGroup.KeyPair keyPair() {
        return g.generate(random);
    }

    /** The shared secret from the host's value (with its checks). */
    @Benchmark
    public byte[] sharedSecret() {
        return keys.sharedSecret(hostValue);
    }

    /** Both: the target's whole Diffie-Hellman part of one exchange. */
    @Benchmark
    public byte[] exchange() {
        return g.generate(random).sharedSecret(hostValue);
    }
}
