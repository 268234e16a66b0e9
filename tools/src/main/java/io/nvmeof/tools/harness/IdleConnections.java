package io.nvmeof.tools.harness;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Opens CONTROLLERS controllers of one I/O queue each (two connections apiece: admin and I/O),
 * each as a host NQN of its own, prints "CONNECTED n" once all are up, then holds them idle
 * (keep-alive only) for SECONDS (bench/idle-connections.sh):
 * {@code java -cp cli/build/nvmeof.jar io.nvmeof.tools.harness.IdleConnections URI CONTROLLERS SECONDS}.
 */
public final class IdleConnections {
    public static void main(String[] args) throws Exception {
        Usage.check(args, 3, "usage: IdleConnections URI CONTROLLERS SECONDS\n  opens CONTROLLERS controllers of"
                + " one I/O queue, each its own host NQN, prints \"CONNECTED n\", holds them idle SECONDS");
        String uri = args[0];
        int controllers = Integer.parseInt(args[1]);
        long seconds = Long.parseLong(args[2]);
        List<Controller> open = new ArrayList<>();
        try {
            for (int i = 0; i < controllers; i++) {
                UUID id = new UUID(0x1d1eL, i);
                open.add(Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(1)
                        .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id, id))));
            }
            System.out.println("CONNECTED " + open.size());
            Thread.sleep(seconds * 1000);
        } finally {
            for (Controller c : open) {
                c.close();
            }
        }
    }
}
