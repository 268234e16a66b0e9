package io.nvmeof.nbd;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.initiator.BlockDevice;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link BlockDevice} as an NBD export (the NBD protocol's fixed newstyle negotiation,
 * structured replies, block size constraints) on a Unix socket or a TCP port: any NBD client
 * (qemu, libnbd's tools, fio's nbd engine, the kernel's nbd-client) then reads and writes the
 * remote namespace, with the initiator's multipath, reconnect and authentication underneath.
 *
 * <pre>{@code
 * try (NbdServer nbd = NbdServer.builder(disk).exportName("").unixSocket(Path.of("/run/vol1.sock")).start()) {
 *     nbd.awaitClose();   // nbdinfo 'nbd+unix:///?socket=/run/vol1.sock'
 * }
 * }</pre>
 *
 * Requests that are not whole logical blocks (a client that ignores the advertised minimum
 * block size) are done by reading, changing and writing the blocks they touch, one such change
 * at a time per block. No export-wide authentication: whoever reaches the socket uses the
 * volume, so a Unix socket is created readable and writable by its owner only (a group if
 * asked), and a TCP listener takes a loopback address unless told otherwise.
 */
public final class NbdServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(NbdServer.class.getName());

    private final NbdExport export;
    private final EventLoopGroup group;
    /** Whether {@link #group} is this server's, to shut down at close (not the caller's: {@link Builder#eventLoops}). */
    private final boolean ownsGroup;
    private final Channel listener;
    private final Path socketPath;
    /** Connections accepted, and those open now. */
    private final AtomicLong connections;
    private final ChannelGroup channels;
    private volatile boolean closed;

    private NbdServer(NbdExport export, EventLoopGroup group, boolean ownsGroup, AtomicLong connections,
                      ChannelGroup channels, Channel listener, Path socketPath) {
        this.export = export;
        this.connections = connections;
        this.channels = channels;
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.listener = listener;
        this.socketPath = socketPath;
    }

    /** A server for {@code device}; say where it listens, then {@link Builder#start()}. */
    public static Builder builder(BlockDevice device) {
        return new Builder(device);
    }

    /** What clients connect to: a {@link UnixDomainSocketAddress} or an {@link InetSocketAddress} (with the port bound). */
    public SocketAddress address() {
        if (socketPath != null) {
            return UnixDomainSocketAddress.of(socketPath);
        }
        return listener.localAddress();
    }

    /** The URI libnbd's tools and qemu take: {@code nbd+unix:///NAME?socket=PATH} or {@code nbd://HOST:PORT/NAME}. */
    public String uri() {
        if (socketPath != null) {
            return "nbd+unix:///" + export.name() + "?socket=" + socketPath;
        }
        InetSocketAddress a = (InetSocketAddress) listener.localAddress();
        String host = a.getAddress().getHostAddress();
        return "nbd://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/" + export.name();
    }

    /** Connections accepted since the start. */
    public long connections() {
        return connections.get();
    }

    /** Connections in the transmission phase now. */
    public int activeConnections() {
        return export.active();
    }

    /** Blocks until {@link #close()} (from another thread, a signal handler say). */
    public void awaitClose() throws InterruptedException {
        listener.closeFuture().sync();
    }

    /** Stops listening and ends every connection (requests in flight finish first, at most 10 s). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        listener.close().syncUninterruptibly();
        export.shutdown();
        // the connections end here, those with requests in flight once answered (at most 10 s)
        for (Channel ch : channels) {
            NbdConnection c = ch.pipeline().get(NbdConnection.class);
            if (c != null) {
                c.shutdown(); // those still negotiating too, which the export does not know yet
            }
        }
        if (!channels.newCloseFuture().awaitUninterruptibly(10, java.util.concurrent.TimeUnit.SECONDS)) {
            channels.close().awaitUninterruptibly(5, java.util.concurrent.TimeUnit.SECONDS);
        }
        if (ownsGroup) {
            group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (socketPath != null) {
            try {
                Files.deleteIfExists(socketPath);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot remove " + socketPath + ": " + e.getMessage());
            }
        }
    }

    /** How the export looks and where it listens. */
    public static final class Builder {
        private final BlockDevice device;
        private String name = "";
        private String description;
        private boolean readOnly;
        private boolean multiConn;
        private Path socket;
        private boolean groupAccess;
        private InetSocketAddress tcp;
        private boolean allowRemote;
        private int threads = 1;
        private EventLoopGroup eventLoops;

        private Builder(BlockDevice device) {
            this.device = Objects.requireNonNull(device, "device");
        }

        /** The export's name (default: empty, the default export a client gets without naming one). */
        public Builder exportName(String name) {
            Objects.requireNonNull(name, "name");
            if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 4096 || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("export name: at most 4096 bytes of UTF-8 without NUL");
            }
            this.name = name;
            return this;
        }

        /** The description NBD_OPT_LIST and NBD_INFO_DESCRIPTION give (default: none). */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /** Refuse writes (NBD_FLAG_READ_ONLY); a write-protected namespace is read-only anyway. */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * Offer NBD_FLAG_CAN_MULTI_CONN: true only when a Flush through the device covers writes
         * completed through it on every connection, as for a namespace of one controller (an NVMe
         * Flush covers the namespace), not for a multipath set whose paths end in different
         * gateways with caches of their own. Default false.
         */
        public Builder multiConn(boolean multiConn) {
            this.multiConn = multiConn;
            return this;
        }

        /** Listen on a Unix socket at {@code path}, mode 0600 (0660 with {@code groupAccess}); it must not exist. */
        public Builder unixSocket(Path path, boolean groupAccess) {
            this.socket = Objects.requireNonNull(path, "path");
            this.groupAccess = groupAccess;
            return this;
        }

        public Builder unixSocket(Path path) {
            return unixSocket(path, false);
        }

        /**
         * Listen on TCP at {@code address} (port 0: any free one). NBD has no authentication here:
         * an address other than loopback is refused unless {@code allowRemote}.
         */
        public Builder tcp(InetSocketAddress address, boolean allowRemote) {
            this.tcp = Objects.requireNonNull(address, "address");
            this.allowRemote = allowRemote;
            return this;
        }

        /** Event loop threads for the NBD connections (default 1). */
        public Builder threads(int threads) {
            if (threads < 1 || threads > 64) {
                throw new IllegalArgumentException("threads must be 1..64: " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * Serve on the caller's event loops instead of {@link #threads} of its own: the loops the
         * device's queues run on ({@code ConnectOptions.eventLoops} given the same group), so a
         * request goes to the fabric on the thread that read it, and its completion comes back
         * there, with no thread woken between. The caller owns them: {@link NbdServer#close()}
         * ends the connections and leaves the loops running.
         */
        public Builder eventLoops(EventLoopGroup group) {
            this.eventLoops = Objects.requireNonNull(group, "group");
            return this;
        }

        /** Starts listening; throws naming the address when it cannot. */
        public NbdServer start() throws IOException {
            if ((socket == null) == (tcp == null)) {
                throw new IllegalArgumentException("give one of unixSocket(path) or tcp(address)");
            }
            if (tcp != null && !allowRemote && (tcp.isUnresolved() || !tcp.getAddress().isLoopbackAddress())) {
                throw new IllegalArgumentException("tcp " + tcp + ": NBD has no authentication here, so only a loopback"
                        + " address is taken unless remote clients are allowed (--allow-remote)");
            }
            NbdExport export = new NbdExport(device, name, description, readOnly, multiConn);
            boolean owns = eventLoops == null;
            EventLoopGroup group = owns ? EventLoops.newGroup(threads, "nvmeof-nbd", BusyPoll.OFF, EventLoops.Engine.EPOLL)
                    : eventLoops;
            boolean nio = EventLoops.engine(group) == EventLoops.Engine.NIO;
            Class<? extends ServerChannel> type = socket != null ? EventLoops.serverDomainChannel(group)
                    : EventLoops.serverChannel(group);
            AtomicLong accepted = new AtomicLong();
            ChannelGroup open = new DefaultChannelGroup("nbd", GlobalEventExecutor.INSTANCE);
            ServerBootstrap b = new ServerBootstrap().group(group).channel(type)
                    .childOption(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            accepted.incrementAndGet();
                            open.add(ch);
                            ch.pipeline().addLast("nbd", new NbdConnection(export));
                        }
                    });
            if (tcp != null) {
                b.childOption(ChannelOption.TCP_NODELAY, true);
            }
            try {
                Channel ch;
                Path bound = null;
                if (socket != null) {
                    bound = socket.toAbsolutePath();
                    ch = bindUnix(b, bound, !nio);
                } else {
                    ch = b.bind(tcp).sync().channel();
                }
                NbdServer server = new NbdServer(export, group, owns, accepted, open, ch, bound);
                if (tcp != null && !((InetSocketAddress) ch.localAddress()).getAddress().isLoopbackAddress()) {
                    LOG.log(System.Logger.Level.WARNING, "NBD on " + ch.localAddress() + " has no authentication:"
                            + " whoever reaches it reads and writes the volume");
                }
                return server;
            } catch (IOException | RuntimeException e) {
                shutdown(owns, group);
                throw e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                shutdown(owns, group);
                throw new IOException("interrupted while binding", e);
            } catch (Exception e) {
                shutdown(owns, group);
                throw new IOException((socket != null ? socket : tcp) + ": cannot listen: " + e.getMessage(), e);
            }
        }

        /**
         * Binds in a fresh private directory beside {@code path}, sets the socket's mode, then
         * moves it into place: no moment where another user could connect.
         */
        private static void shutdown(boolean owns, EventLoopGroup group) {
            if (owns) {
                group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
            }
        }

        private Channel bindUnix(ServerBootstrap b, Path path, boolean epoll) throws Exception {
            Path dir = path.getParent();
            if (dir == null || !Files.isDirectory(dir)) {
                throw new IOException(path + ": no such directory " + dir);
            }
            if (Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw new FileAlreadyExistsException(path + ": exists (a server already there, or one that did not end"
                        + " cleanly: remove it)");
            }
            Path staging = Files.createTempDirectory(dir, ".nbd-");
            try {
                Path tmp = staging.resolve("s");
                SocketAddress a = epoll ? new DomainSocketAddress(tmp.toString()) : UnixDomainSocketAddress.of(tmp);
                Channel ch = b.bind(a).sync().channel();
                Set<PosixFilePermission> mode = PosixFilePermissions.fromString(groupAccess ? "rw-rw----" : "rw-------");
                Files.setPosixFilePermissions(tmp, mode);
                try {
                    Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException | FileAlreadyExistsException e) {
                    ch.close();
                    throw e;
                }
                return ch;
            } finally {
                Files.deleteIfExists(staging.resolve("s"));
                Files.deleteIfExists(staging);
            }
        }
    }
}
