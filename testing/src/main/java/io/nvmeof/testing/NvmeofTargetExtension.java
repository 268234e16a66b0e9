package io.nvmeof.testing;

import io.nvmeof.fabric.Sizes;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts and stops {@link EmbeddedTarget}s for JUnit 5 tests. Used through {@link NvmeofTarget}
 * on a class or field, or registered with a builder of its own:
 *
 * <pre>{@code
 * @RegisterExtension
 * static NvmeofTargetExtension nvme = new NvmeofTargetExtension(EmbeddedTarget.builder().ramNamespace(16 << 20));
 * }</pre>
 *
 * A static field's extension keeps one target for the class and lifts its faults after each test;
 * an instance field's starts one per test. Test parameters of type {@link EmbeddedTarget} or
 * {@link URI} receive the target that serves the test.
 */
public final class NvmeofTargetExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(NvmeofTargetExtension.class);
    private static final String FOR_TEST = "target";

    /** The builder of a registered extension; null when the annotation drives it. */
    private final EmbeddedTarget.Builder builder;
    /** A registered extension's target, per class (static field) or per test. */
    private EmbeddedTarget target;
    private boolean perClass;

    /** For {@link NvmeofTarget}: the annotation says what to start. */
    public NvmeofTargetExtension() {
        this.builder = null;
    }

    /** A registered extension that starts targets from {@code builder}. */
    public NvmeofTargetExtension(EmbeddedTarget.Builder builder) {
        this.builder = builder;
    }

    /** A registered extension's target now (null outside a test). */
    public EmbeddedTarget target() {
        return target;
    }

    /** The address of {@link #target()}. */
    public String uri() {
        return target.uri();
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Class<?> testClass = context.getRequiredTestClass();
        if (builder != null) {
            perClass = true; // beforeAll reaches only an extension registered in a static field
            target = builder.start();
            return;
        }
        for (Field f : annotatedFields(testClass)) {
            if (Modifier.isStatic(f.getModifiers())) {
                f.set(null, started(context, f.getAnnotation(NvmeofTarget.class)));
            }
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        if (builder != null) {
            if (!perClass) {
                target = builder.start();
            }
            return;
        }
        Object instance = context.getRequiredTestInstance();
        for (Field f : annotatedFields(instance.getClass())) {
            if (!Modifier.isStatic(f.getModifiers())) {
                f.set(instance, started(context, f.getAnnotation(NvmeofTarget.class)));
            }
        }
        Optional<NvmeofTarget> onClass = context.getTestClass().map(c -> c.getAnnotation(NvmeofTarget.class));
        if (onClass.isPresent()) {
            context.getStore(STORE).put(FOR_TEST, started(context, onClass.get()));
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        if (builder != null) {
            if (perClass) {
                target.clearFaults();
            } else {
                closeTarget();
            }
            return;
        }
        for (Field f : annotatedFields(context.getRequiredTestClass())) {
            if (Modifier.isStatic(f.getModifiers())) {
                try {
                    EmbeddedTarget t = (EmbeddedTarget) f.get(null);
                    if (t != null) {
                        t.clearFaults();
                    }
                } catch (IllegalAccessException e) {
                    throw new ExtensionConfigurationException("reading " + f, e);
                }
            }
        }
        // targets started for the test close with its store
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        if (builder != null) {
            closeTarget();
        }
    }

    private void closeTarget() throws IOException {
        EmbeddedTarget t = target;
        target = null;
        if (t != null) {
            t.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return (type == EmbeddedTarget.class || type == URI.class) && current(context) != null;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        EmbeddedTarget t = current(context);
        if (t == null) {
            throw new ParameterResolutionException("no NVMe-oF target serves " + context.getDisplayName());
        }
        return parameter.getParameter().getType() == URI.class ? URI.create(t.uri()) : t;
    }

    /** The target serving the test now: a registered extension's, the class annotation's, or the one annotated field's. */
    private EmbeddedTarget current(ExtensionContext context) {
        if (builder != null) {
            return target;
        }
        EmbeddedTarget t = context.getStore(STORE).get(FOR_TEST, EmbeddedTarget.class);
        if (t != null) {
            return t;
        }
        List<Field> fields = annotatedFields(context.getRequiredTestClass());
        if (fields.size() != 1) {
            return null;
        }
        Field f = fields.get(0);
        try {
            Object owner = Modifier.isStatic(f.getModifiers()) ? null : context.getTestInstance().orElse(null);
            return owner == null && !Modifier.isStatic(f.getModifiers()) ? null : (EmbeddedTarget) f.get(owner);
        } catch (IllegalAccessException e) {
            throw new ExtensionConfigurationException("reading " + f, e);
        }
    }

    /** Starts a target as {@code spec} says; it closes with {@code context}'s store (the class's or the test's). */
    private static EmbeddedTarget started(ExtensionContext context, NvmeofTarget spec) throws IOException {
        EmbeddedTarget.Builder b = EmbeddedTarget.builder().subsystemNqn(spec.nqn());
        for (String size : spec.namespaces()) {
            b.ramNamespace(Sizes.parse(size, "namespace size"), spec.blockSize());
        }
        for (String host : spec.allowHosts()) {
            b.allowHost(host);
        }
        EmbeddedTarget t = b.start();
        context.getStore(STORE).put(new Object(), (ExtensionContext.Store.CloseableResource) t::close);
        return t;
    }

    private static List<Field> annotatedFields(Class<?> testClass) {
        List<Field> fields = new ArrayList<>();
        for (Class<?> c = testClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (f.isAnnotationPresent(NvmeofTarget.class)) {
                    if (f.getType() != EmbeddedTarget.class) {
                        throw new ExtensionConfigurationException("@NvmeofTarget field " + f.getName() + " of "
                                + c.getName() + " must be of type EmbeddedTarget");
                    }
                    f.setAccessible(true);
                    fields.add(f);
                }
            }
        }
        return fields;
    }
}
