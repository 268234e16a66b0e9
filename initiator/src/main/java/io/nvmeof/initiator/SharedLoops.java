package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The host's event loops, shared by every controller in the process that does not bring its own
 * ({@link ConnectOptions#eventLoops}): a loop per core for each way of waiting and engine the
 * controllers ask for, made when the first such controller connects and shut down when the last
 * one closes. A hundred devices then run on the cores' loops, not on a group each, as Linux's
 * host runs every controller's queues on its shared workqueue.
 */
final class SharedLoops {
    private record Key(BusyPoll poll, EventLoops.Engine engine) {
    }

    private static final class Entry {
        final EventLoopGroup group;
        int users;

        Entry(EventLoopGroup group) {
            this.group = group;
        }
    }

    private static final Map<Key, Entry> GROUPS = new HashMap<>();

    private SharedLoops() {
    }

    /** The loops for controllers that wait as {@code poll} says on {@code engine}; {@link #release} when done. */
    static synchronized EventLoopGroup acquire(BusyPoll poll, EventLoops.Engine engine) {
        Entry e = GROUPS.computeIfAbsent(new Key(poll, engine), k -> new Entry(
                EventLoops.newGroup(Runtime.getRuntime().availableProcessors(), "nvmeof-host", poll, engine)));
        e.users++;
        return e.group;
    }

    /** A controller is done with {@code group}: the last one shuts it down (waiting at most 5 s for that). */
    static void release(EventLoopGroup group) {
        boolean last = false;
        synchronized (SharedLoops.class) {
            for (Map.Entry<Key, Entry> m : GROUPS.entrySet()) {
                Entry e = m.getValue();
                if (e.group == group) {
                    if (--e.users == 0) {
                        GROUPS.remove(m.getKey());
                        last = true;
                    }
                    break;
                }
            }
        }
        if (last) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
