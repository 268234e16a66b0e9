package io.nvmeof.fabric.rdma.soft;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviderType;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reliable-connection semantics in software over TCP, so the NVMe/RDMA binding runs on any
 * machine: SEND/RECV with posted receive buffers, one-sided RDMA READ and WRITE served by the
 * peer's provider against its registered regions (key, bounds and access checked), connect
 * private data, accept and reject. Speaks only to another soft provider.
 */
public final class SoftProvider implements RdmaProvider {
    private final EventLoopGroup group;
    private final SoftDomain pd = new SoftDomain();

    public SoftProvider(EventLoopGroup group) {
        this.group = group;
    }

    @Override
    public String name() {
        return "soft";
    }

    /** The domain every connection of this provider registers in. */
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public RdmaListener listen(InetSocketAddress address, ConnectAcceptor acceptor) throws IOException {
        ServerBootstrap b = new ServerBootstrap().group(group).channel(EventLoops.serverChannel(group))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new SoftConnection(pd, acceptor).wire());
                    }
                });
        Channel ch;
        try {
            ch = b.bind(address).sync().channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted binding " + address, e);
        } catch (Exception e) {
            throw new IOException("cannot listen on " + address + " (soft RDMA): " + e.getMessage(), e);
        }
        return new RdmaListener() {
            @Override
            public InetSocketAddress localAddress() {
                return (InetSocketAddress) ch.localAddress();
            }

            @Override
            public void close() {
                ch.close().syncUninterruptibly();
            }
        };
    }

    @Override
    public CompletableFuture<RdmaConnection> connect(InetSocketAddress address, ConnectParams p, RdmaHandler handler) {
        CompletableFuture<RdmaConnection> f = new CompletableFuture<>();
        SoftConnection c = new SoftConnection(pd, p.privateData(), p.sendDepth(), p.recvDepth(),
                p.responderResources(), p.initiatorDepth(), handler, f);
        Bootstrap b = new Bootstrap().group(group).channel(EventLoops.clientChannel(group))
                .option(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, p.timeoutMillis())
                .handler(c.wire());
        b.connect(address).addListener(x -> {
            if (!x.isSuccess()) {
                Throwable t = x.cause();
                f.completeExceptionally(new IOException("cannot connect to " + address + " (soft RDMA): "
                        + (t.getMessage() != null ? t.getMessage() : t.toString()), t));
            } else {
                Channel ch = ((ChannelFuture) x).channel();
                ch.eventLoop().schedule(() -> {
                    if (f.completeExceptionally(new IOException("no answer to the connect request from " + address
                            + " within " + p.timeoutMillis() + " ms"))) {
                        ch.close();
                    }
                }, p.timeoutMillis(), TimeUnit.MILLISECONDS);
            }
        });
        return f;
    }

    @Override
    public void close() {
    }

    /** {@code soft} as a provider type, found by {@link io.nvmeof.fabric.rdma.RdmaProviders}. */
    public static final class Type extends RdmaProviderType {
        public Type() {
            super("soft", (group, tuning) -> new SoftProvider(group));
        }
    }
}
