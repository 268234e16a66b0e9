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
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;

/**
 * The one place that picks Netty's transport, for the whole process: native epoll where it
 * loads (the default), io_uring when asked ({@code -Dnvmeof.io=io_uring}) and the kernel has it,
 * NIO otherwise or when asked ({@code -Dnvmeof.io=nio}). Both sides of the stack build their
 * event loops and channels through it. io_uring measured no better than epoll here (randread
 * QD32 3-5% fewer IOPS, QD1 and randwrite the same, kernel 6.18), so epoll stays the default.
 */
public final class EventLoops {
    /** Netty's I/O transports. */
    public enum Engine {
        EPOLL, IO_URING, NIO;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The process's engine: -Dnvmeof.io (host side), or the target's io_engine through {@link #use}. */
    private static volatile Engine ENGINE = choose(System.getProperty("nvmeof.io", ""));
    /** Whether a group was made: the engine is then fixed, since channels must match their loops. */
    private static boolean fixed;

    /**
     * The buffer allocator of every channel. The pooled allocator hands a recycled buffer
     * back together with its cached NIO view, so taking {@code internalNioBuffer} for a
     * backend call or copying a header allocates nothing; Netty 4.2's default adaptive
     * allocator makes a new NIO slice each time (AllocationTest measures the difference).
     */
    public static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private EventLoops() {
    }

    static Engine choose(String asked) {
        switch (asked.trim().toLowerCase(Locale.ROOT)) {
            case "io_uring":
                if (IoUring.isAvailable()) {
                    return Engine.IO_URING;
                }
                System.getLogger(EventLoops.class.getName()).log(System.Logger.Level.WARNING,
                        "nvmeof.io=io_uring: io_uring is not available here ({0}); using epoll or NIO",
                        String.valueOf(IoUring.unavailabilityCause()));
                break;
            case "nio":
                return Engine.NIO;
            case "":
            case "epoll":
                break;
            default:
                throw new IllegalArgumentException("nvmeof.io: expected epoll, io_uring or nio: '" + asked + "'");
        }
        return Epoll.isAvailable() ? Engine.EPOLL : Engine.NIO;
    }

    /**
     * Chooses the engine of this process ({@code epoll}, {@code io_uring}, {@code nio}) before its
     * first event loops are made (io_uring falls back to epoll, epoll to NIO, where unavailable);
     * once loops exist, a different choice is refused, since every channel must match its loops.
     */
    public static synchronized void use(String engine) {
        Engine e = choose(engine);
        if (e != ENGINE && fixed) {
            throw new IllegalStateException("the event loops of this process run on " + ENGINE
                    + " already; io_engine " + engine + " needs a process of its own");
        }
        ENGINE = e;
    }

    /** The transport of this process. */
    public static Engine engine() {
        return ENGINE;
    }

    /** True when native epoll is in use. */
    public static boolean nativeEpoll() {
        return ENGINE == Engine.EPOLL;
    }

    /** One event loop per core unless told otherwise ({@code threads <= 0}), sleeping when idle. */
    public static EventLoopGroup newGroup(int threads, String name) {
        return newGroup(threads, name, BusyPoll.OFF);
    }

    /**
     * One event loop per core unless told otherwise ({@code threads <= 0}), polling as {@code poll}
     * says (native epoll only; on io_uring and NIO the loops sleep as usual).
     */
    public static EventLoopGroup newGroup(int threads, String name, BusyPoll poll) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        synchronized (EventLoops.class) {
            fixed = true;
        }
        IoHandlerFactory factory;
        switch (ENGINE) {
            case IO_URING:
                factory = IoUringIoHandler.newFactory();
                break;
            case NIO:
                factory = NioIoHandler.newFactory();
                break;
            default:
                factory = poll.off() ? EpollIoHandler.newFactory() : EpollIoHandler.newFactory(0, poll::newStrategy);
        }
        return new MultiThreadIoEventLoopGroup(n, new DefaultThreadFactory(name, true), factory);
    }

    public static Class<? extends ServerChannel> serverChannel() {
        switch (ENGINE) {
            case IO_URING:
                return IoUringServerSocketChannel.class;
            case NIO:
                return NioServerSocketChannel.class;
            default:
                return EpollServerSocketChannel.class;
        }
    }

    public static Class<? extends Channel> clientChannel() {
        switch (ENGINE) {
            case IO_URING:
                return IoUringSocketChannel.class;
            case NIO:
                return NioSocketChannel.class;
            default:
                return EpollSocketChannel.class;
        }
    }
}
