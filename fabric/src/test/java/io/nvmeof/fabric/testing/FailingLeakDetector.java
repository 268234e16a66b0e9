package io.nvmeof.fabric.testing;

import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty leak detector for tests: installed with {@code -Dio.netty.customResourceLeakDetector},
 * it records every leak report so {@link LeakCheckExtension} can fail the test class.
 */
public final class FailingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    public FailingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
    }

    public FailingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval);
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + " (untraced)");
        super.reportUntracedLeak(resourceType);
    }

    /** Leak reports so far, and forgets them. */
    public static List<String> drain() {
        List<String> copy = List.copyOf(LEAKS);
        LEAKS.clear();
        return copy;
    }
}
