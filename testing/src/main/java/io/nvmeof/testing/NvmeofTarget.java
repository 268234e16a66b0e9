package io.nvmeof.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An {@link EmbeddedTarget} for a JUnit 5 test. On a test class: each test method gets a fresh
 * target, and its parameters of type {@link EmbeddedTarget} or {@link java.net.URI} receive it and
 * its address. On a field of type {@link EmbeddedTarget}: an instance field gets a fresh target
 * per test, a static field one for the class (its faults lifted after each test). The target stops
 * when its test (or class) ends.
 *
 * <pre>{@code
 * @NvmeofTarget(namespaces = "64MiB")
 * class MyStoreTest {
 *     @Test
 *     void survivesADroppedConnection(EmbeddedTarget target) throws Exception {
 *         try (Controller c = Nvmeof.connect(target.uri())) { ... }
 *     }
 * }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.FIELD})
@ExtendWith(NvmeofTargetExtension.class)
public @interface NvmeofTarget {
    /** RAM namespaces, NSID 1 first, by size ({@code 64MiB}, {@code 1G}, {@code 1048576}). */
    String[] namespaces() default {"64MiB"};

    /** Block size of the RAM namespaces: 512 or 4096. */
    int blockSize() default 4096;

    /** The subsystem NQN. */
    String nqn() default EmbeddedTarget.DEFAULT_NQN;

    /** Host NQNs let in; empty: any host. */
    String[] allowHosts() default {};
}
