import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;

/**
 * A host that connects and then does nothing (keep-alive only) for a while: what an idle
 * connection costs. Run from source with the CLI jar on the class path:
 * {@code java -cp cli/build/nvmeof.jar bench/IdleHost.java URI SECONDS [BUSY_POLL]}.
 */
public final class IdleHost {
    public static void main(String[] args) throws Exception {
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2);
        if (args.length > 2) {
            o.busyPoll(io.nvmeof.fabric.BusyPoll.parse(args[2]));
        }
        try (Controller c = Nvmeof.connect(args[0], o)) {
            System.out.println("connected, " + c.namespace(1).size() + " bytes");
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
    }
}
