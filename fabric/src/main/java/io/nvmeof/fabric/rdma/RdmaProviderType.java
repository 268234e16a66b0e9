package io.nvmeof.fabric.rdma;

import io.netty.channel.EventLoopGroup;

/**
 * A kind of RDMA provider, found by name ({@link RdmaProviders}): listed as a service ({@code
 * META-INF/services/io.nvmeof.fabric.rdma.RdmaProviderType}) by the jar that carries it. The
 * {@code soft} provider is in this module; {@code verbs} and {@code disni}, which need native
 * libraries (jnr-ffi, DiSNI), are in {@code nvmeof-rdma}, so that an application using only
 * NVMe/TCP does not carry them. A provider's type is a subclass with a public no-argument
 * constructor that names it and says how to open it.
 */
public abstract class RdmaProviderType {
    /** How a provider is opened. */
    @FunctionalInterface
    protected interface Opener {
        RdmaProvider open(EventLoopGroup group, RdmaTuning tuning) throws RdmaUnavailableException;
    }

    private final String name;
    private final Opener opener;

    protected RdmaProviderType(String name, Opener opener) {
        this.name = name;
        this.opener = opener;
    }

    /** {@code verbs}, {@code disni}, {@code soft}. */
    public final String name() {
        return name;
    }

    /**
     * Opens the provider, whose connections deliver completions on loops of {@code group}, tuned as {@code tuning} says.
     * Fails at once, with one message saying what is missing and how to get it, where it
     * cannot run here.
     */
    public final RdmaProvider open(EventLoopGroup group, RdmaTuning tuning) throws RdmaUnavailableException {
        return opener.open(group, tuning);
    }
}
