package io.nvmeof.tools.harness;

import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;

/**
 * A host that connects and then does nothing (keep-alive only) for a while: what an idle
 * connection costs (bench/poll-cost.sh):
 * {@code java -cp cli/build/nvmeof.jar io.nvmeof.tools.harness.IdleHost URI SECONDS [BUSY_POLL]}.
 */
public final class IdleHost {
    public static void main(String[] args) throws Exception {
        Usage.check(args, 2, "usage: IdleHost URI SECONDS [BUSY_POLL]\n  connects (2 I/O queues), prints"
                + " \"connected, N bytes\", idles SECONDS; BUSY_POLL as nvmeof's --busy-poll");
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2);
        if (args.length > 2) {
            o.busyPoll(BusyPoll.parse(args[2]));
        }
        try (Controller c = Nvmeof.connect(args[0], o)) {
            System.out.println("connected, " + c.namespace(1).size() + " bytes");
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
    }
}
