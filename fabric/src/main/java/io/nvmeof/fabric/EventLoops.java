package io.nvmeof.fabric;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The one place that picks Netty's transport: native epoll where it loads, NIO otherwise.
 * Both sides of the stack build their event loops and channels through it.
 */
public final class EventLoops {
    private static final boolean EPOLL = Epoll.isAvailable() && !Boolean.getBoolean("nvmeof.nio");

    /**
     * The buffer allocator of every channel. The pooled allocator hands a recycled buffer
     * back together with its cached NIO view, so taking {@code internalNioBuffer} for a
     * backend call or copying a header allocates nothing; Netty 4.2's default adaptive
     * allocator makes a new NIO slice each time (AllocationTest measures the difference).
     */
    public static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private EventLoops() {
    }

    /** True when native epoll is in use. */
    public static boolean nativeEpoll() {
        return EPOLL;
    }

    /** One event loop per core unless told otherwise ({@code threads <= 0}), sleeping when idle. */
    public static EventLoopGroup newGroup(int threads, String name) {
        return newGroup(threads, name, BusyPoll.OFF);
    }

    /**
     * One event loop per core unless told otherwise ({@code threads <= 0}), polling as {@code poll}
     * says (native epoll only; NIO sleeps as usual).
     */
    public static EventLoopGroup newGroup(int threads, String name, BusyPoll poll) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        IoHandlerFactory factory = !EPOLL ? NioIoHandler.newFactory()
                : poll.off() ? EpollIoHandler.newFactory() : EpollIoHandler.newFactory(0, poll::newStrategy);
        return new MultiThreadIoEventLoopGroup(n, new DefaultThreadFactory(name, true), factory);
    }

    public static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends Channel> clientChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
