package io.nvmeof.target;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.nvmeof.fabric.EventLoops;
import java.io.IOException;
import java.net.InetSocketAddress;

/** An NVMe/TCP port of the target: accepts connections, one queue each. */
public final class TcpListener implements PortListener {
    private static final System.Logger LOG = System.getLogger(TcpListener.class.getName());
    private final Channel server;
    private final ChannelGroup connections;

    private TcpListener(Channel server, ChannelGroup connections) {
        this.server = server;
        this.connections = connections;
    }

    /** Binds {@code address} (port 0 picks a free one) and serves {@code target} on it. */
    public static TcpListener bind(Target target, EventLoopGroup group, Port port) throws IOException, InterruptedException {
        InetSocketAddress address = port.address();
        ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channel(EventLoops.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 128)
                .option(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .childOption(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        Admission.ConnectionSlot slot = target.admission().admitConnection();
                        if (slot == null) {
                            LOG.log(System.Logger.Level.WARNING, "refused a connection from {0}: {1} connections open"
                                    + " besides discovery controllers, the most the target takes", ch.remoteAddress(),
                                    target.admission().countedConnections());
                            ch.close();
                            return;
                        }
                        ch.closeFuture().addListener(f -> slot.end());
                        connections.add(ch);
                        String tls = port.options().getOrDefault(TcpTransport.TLS, "none");
                        if (!tls.equals("none")) {
                            ch.pipeline().addLast("tls-detect", new TlsDetector(target, tls.equals("required")));
                        }
                        ch.pipeline().addLast("nvme-tcp", new TcpQueue(target, port, slot));
                    }
                });
        Channel server;
        try {
            server = b.bind(address).sync().channel();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) { // Netty's native bind error names no address
            throw new IOException("port " + port.id() + ": cannot listen on tcp://" + address.getHostString() + ":"
                    + address.getPort() + ": " + io.nvmeof.fabric.Failures.describe(e), e);
        }
        return new TcpListener(server, connections);
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) server.localAddress();
    }

    /** Connections open right now. */
    public int connectionCount() {
        return connections.size();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        connections.close().syncUninterruptibly();
    }
}
