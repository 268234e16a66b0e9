package io.nvmeof.fabric;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
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

    /**
     * Busy polling: with no task queued the loop asks epoll for events without sleeping, so an
     * event is seen as soon as it is there, without the wake-up of a sleeping thread (what SPDK's
     * reactors always do). Each loop then spins a whole core.
     */
    private static final SelectStrategy BUSY_POLL = (selectNow, hasTasks) ->
            hasTasks ? selectNow.get() : SelectStrategy.BUSY_WAIT;

    /** One event loop per core unless told otherwise ({@code threads <= 0}). */
    public static EventLoopGroup newGroup(int threads, String name) {
        return newGroup(threads, name, false);
    }

    /**
     * One event loop per core unless told otherwise ({@code threads <= 0}); with {@code busyPoll}
     * each loop polls without sleeping (native epoll only; NIO has no busy wait and sleeps as usual).
     */
    public static EventLoopGroup newGroup(int threads, String name, boolean busyPoll) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        IoHandlerFactory factory = !EPOLL ? NioIoHandler.newFactory()
                : busyPoll ? EpollIoHandler.newFactory(0, () -> BUSY_POLL) : EpollIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(n, new DefaultThreadFactory(name, true), factory);
    }

    public static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends Channel> clientChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
