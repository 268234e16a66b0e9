package io.nvmeof.fabric;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerDomainSocketChannel;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;
import java.util.Objects;

/**
 * The one place that picks Netty's transport: native epoll where it loads (the default),
 * io_uring when asked and the kernel has it, NIO otherwise or when asked. Both sides of the
 * stack build their event loops and channels through it. The target asks once for its process
 * (its {@code io_engine} setting, through {@link #use}); the host asks per group of loops (its
 * connect options' engine, through {@link #newGroup(int, String, BusyPoll, Engine)}) and takes
 * its channels from the group ({@link #clientChannel(EventLoopGroup)}). io_uring measured no
 * better than epoll here (randread QD32 3-5% fewer IOPS, QD1 and randwrite the same, kernel
 * 6.18), so epoll stays the default.
 */
public final class EventLoops {
    /** Netty's I/O transports. */
    public enum Engine {
        EPOLL, IO_URING, NIO;

        /** The engine named {@code epoll}, {@code io_uring} or {@code nio} (any case), as the target's io_engine. */
        public static Engine of(String name) {
            for (Engine e : values()) {
                if (e.toString().equals(name.trim().toLowerCase(Locale.ROOT))) {
                    return e;
                }
            }
            throw new IllegalArgumentException("expected epoll, io_uring or nio: '" + name + "'");
        }

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The process's engine (the target's io_engine, through {@link #use}); epoll, or NIO where epoll does not load. */
    private static volatile Engine ENGINE = choose("");
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

    /** The engine {@code asked} names (empty: the default), where it runs here. */
    static Engine choose(String asked) {
        return asked.isBlank() ? available(Engine.EPOLL) : available(Engine.of(asked));
    }

    /** {@code asked}, or where it cannot run here, what can: io_uring falls back to epoll (logged), epoll to NIO. */
    static Engine available(Engine asked) {
        if (asked == Engine.IO_URING) {
            if (IoUring.isAvailable()) {
                return Engine.IO_URING;
            }
            System.getLogger(EventLoops.class.getName()).log(System.Logger.Level.WARNING,
                    "io_uring is not available here ({0}); using epoll or NIO", String.valueOf(IoUring.unavailabilityCause()));
        } else if (asked == Engine.NIO) {
            return Engine.NIO;
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
     * says (native epoll only; on io_uring and NIO the loops sleep as usual), on the process's
     * engine, which is then fixed.
     */
    public static EventLoopGroup newGroup(int threads, String name, BusyPoll poll) {
        synchronized (EventLoops.class) {
            fixed = true;
        }
        return group(threads, name, poll, ENGINE);
    }

    /**
     * {@link #newGroup(int, String, BusyPoll)} on {@code engine} (falling back where it cannot run
     * here, as {@link #use} does) whatever the process's engine: loops of their own, as a host's
     * controller has. Channels on them come from {@link #clientChannel(EventLoopGroup)} and
     * {@link #serverChannel(EventLoopGroup)}.
     */
    public static EventLoopGroup newGroup(int threads, String name, BusyPoll poll, Engine engine) {
        return group(threads, name, poll, available(Objects.requireNonNull(engine, "engine")));
    }

    private static EventLoopGroup group(int threads, String name, BusyPoll poll, Engine engine) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        IoHandlerFactory factory;
        switch (engine) {
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

    /**
     * The loop at {@code index} (modulo their number) of {@code group}'s loops: a host's I/O queue
     * {@code qid} goes on loop {@code qid - 1}, so with at least as many queues as loops every loop
     * has one, and a caller running on any of them submits without a hand-off.
     */
    public static EventLoop loop(EventLoopGroup group, int index) {
        java.util.List<EventLoop> loops = new java.util.ArrayList<>();
        for (io.netty.util.concurrent.EventExecutor e : group) {
            loops.add((EventLoop) e);
        }
        return loops.get(Math.floorMod(index, loops.size()));
    }

    /** The engine the loops of {@code group} run on (the process's, for a group not made here). */
    public static Engine engine(EventLoopGroup group) {
        if (group instanceof IoEventLoopGroup g) {
            if (g.isIoType(EpollIoHandler.class)) {
                return Engine.EPOLL;
            }
            if (g.isIoType(NioIoHandler.class)) {
                return Engine.NIO;
            }
            if (g.isIoType(IoUringIoHandler.class)) {
                return Engine.IO_URING;
            }
        }
        return ENGINE;
    }

    /** The server channel of the process's engine. */
    public static Class<? extends ServerChannel> serverChannel() {
        return serverChannel(ENGINE);
    }

    /** The server channel that runs on the loops of {@code group}. */
    public static Class<? extends ServerChannel> serverChannel(EventLoopGroup group) {
        return serverChannel(engine(group));
    }

    /** The Unix-domain server channel that runs on the loops of {@code group}. */
    public static Class<? extends ServerChannel> serverDomainChannel(EventLoopGroup group) {
        switch (engine(group)) {
            case IO_URING:
                return IoUringServerDomainSocketChannel.class;
            case NIO:
                return NioServerDomainSocketChannel.class;
            default:
                return EpollServerDomainSocketChannel.class;
        }
    }

    /** The client channel of the process's engine. */
    public static Class<? extends Channel> clientChannel() {
        return clientChannel(ENGINE);
    }

    /** The client channel that runs on the loops of {@code group}. */
    public static Class<? extends Channel> clientChannel(EventLoopGroup group) {
        return clientChannel(engine(group));
    }

    private static Class<? extends ServerChannel> serverChannel(Engine engine) {
        switch (engine) {
            case IO_URING:
                return IoUringServerSocketChannel.class;
            case NIO:
                return NioServerSocketChannel.class;
            default:
                return EpollServerSocketChannel.class;
        }
    }

    private static Class<? extends Channel> clientChannel(Engine engine) {
        switch (engine) {
            case IO_URING:
                return IoUringSocketChannel.class;
            case NIO:
                return NioSocketChannel.class;
            default:
                return EpollSocketChannel.class;
        }
    }
}
