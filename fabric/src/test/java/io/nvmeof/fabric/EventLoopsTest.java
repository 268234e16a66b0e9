package io.nvmeof.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EventLoopsTest {
    @Test
    void enginesAreNamedAsTheTargetsIoEngine() {
        assertEquals(EventLoops.Engine.EPOLL, EventLoops.Engine.of("epoll"));
        assertEquals(EventLoops.Engine.IO_URING, EventLoops.Engine.of("IO_URING"));
        assertEquals(EventLoops.Engine.NIO, EventLoops.Engine.of(" nio "));
        assertEquals("io_uring", EventLoops.Engine.IO_URING.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EventLoops.Engine.of("dpdk"));
        assertEquals("expected epoll, io_uring or nio: 'dpdk'", e.getMessage());
    }

    /** A group on an engine of its own: its channels are its engine's, the process's engine is left alone. */
    @Test
    void aGroupOnAnEngineOfItsOwnGivesItsChannels() {
        EventLoops.Engine process = EventLoops.engine();
        EventLoopGroup nio = EventLoops.newGroup(1, "engine-test-nio", BusyPoll.OFF, EventLoops.Engine.NIO);
        try {
            assertEquals(EventLoops.Engine.NIO, EventLoops.engine(nio));
            assertEquals(NioSocketChannel.class, EventLoops.clientChannel(nio));
            assertEquals(NioServerSocketChannel.class, EventLoops.serverChannel(nio));
            assertEquals(io.netty.channel.socket.nio.NioServerDomainSocketChannel.class, EventLoops.serverDomainChannel(nio));
            assertEquals(NioSocketChannel.class, EventLoops.clientChannel(EventLoops.loop(nio, 0)), "a loop alone: its engine");
            assertEquals(process, EventLoops.engine());
        } finally {
            nio.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
        assumeTrue(Epoll.isAvailable(), "no native epoll here");
        EventLoopGroup epoll = EventLoops.newGroup(1, "engine-test-epoll", BusyPoll.ADAPTIVE, EventLoops.Engine.EPOLL);
        try {
            assertEquals(EventLoops.Engine.EPOLL, EventLoops.engine(epoll));
            assertEquals(EpollSocketChannel.class, EventLoops.clientChannel(epoll));
            assertEquals(EpollServerSocketChannel.class, EventLoops.serverChannel(epoll));
            assertEquals(io.netty.channel.epoll.EpollServerDomainSocketChannel.class, EventLoops.serverDomainChannel(epoll));
        } finally {
            epoll.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
        assertEquals(process, EventLoops.engine());
    }

    /** Queue i on loop i (modulo the loops): with as many queues as loops, each loop has one. */
    @Test
    void eachIndexHasItsLoop() {
        EventLoopGroup g = EventLoops.newGroup(3, "loop-index-test", BusyPoll.OFF, EventLoops.Engine.NIO);
        try {
            java.util.Set<io.netty.channel.EventLoop> seen = new java.util.HashSet<>();
            for (int i = 0; i < 3; i++) {
                seen.add(EventLoops.loop(g, i));
                assertEquals(EventLoops.loop(g, i), EventLoops.loop(g, i + 3), "the same loop every time, modulo");
            }
            assertEquals(3, seen.size());
        } finally {
            g.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
