package io.nvmeof.initiator;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A host controller's asynchronous events (Base 2.0, 5.2): it enables namespace-attribute
 * notices, keeps one Asynchronous Event Request outstanding on the live admin queue, and on
 * each event (on the controller's thread) reads the log page the event names, so the
 * controller reports such events again, refreshes the namespaces after a change and tells the
 * listeners.
 */
final class AsyncEventHandler {
    private static final System.Logger LOG = System.getLogger(AsyncEventHandler.class.getName());

    /** OAES / Asynchronous Event Configuration bits (Base 2.0, Figure 326). */
    static final int NAMESPACE_ATTRIBUTE_NOTICES = 1 << 8;
    static final int ANA_CHANGE_NOTICES = 1 << 11;
    static final int DISCOVERY_LOG_NOTICES = 1 << 31;
    private final Controller controller;
    private final List<Consumer<Controller.AsyncEvent>> listeners = new CopyOnWriteArrayList<>();

    AsyncEventHandler(Controller controller) {
        this.controller = controller;
    }

    void addListener(Consumer<Controller.AsyncEvent> listener) {
        listeners.add(listener);
    }

    /** On the new association's admin queue: notices on, one request outstanding. */
    void start(HostQueue admin, IdentifyController identify) throws IOException {
        // the notices this host acts on, of those the controller sends: namespace attributes, ANA
        // changes, and a discovery controller's log changes (for its listeners: referrals, new subsystems)
        int notices = identify.oaes() & (NAMESPACE_ATTRIBUTE_NOTICES | ANA_CHANGE_NOTICES | DISCOVERY_LOG_NOTICES);
        if (notices == 0) {
            return;
        }
        controller.run(admin, Command.of("Set Features (Async Event Configuration)",
                q -> q.opcode(AdminOpcode.SET_FEATURES.code).feature(FeatureId.ASYNC_EVENT_CONFIG, notices)));
        post(admin);
    }

    private void post(HostQueue q) {
        if (!controller.isLiveAdmin(q)) {
            return;
        }
        Command aer = Command.admin(AdminOpcode.ASYNC_EVENT_REQUEST, "Asynchronous Event Request");
        aer.exemptFromTimeout = true;
        q.submit(aer);
        aer.whenComplete((c, t) -> {
            if (t != null) {
                Throwable x = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                if (x instanceof NvmeStatusException s && !s.status().equals(Status.AER_LIMIT_EXCEEDED) && q.isOpen()) {
                    post(q); // a failed request: keep one outstanding
                }
                return; // otherwise the queue went away; a reconnect posts a new one
            }
            int dw0 = (int) c.result();
            // handling reads log pages, waiting for them: not before a recovery under way is done
            // (an event the new association reports at once would otherwise hold the thread the
            // recovery's last step needs, and every command waiting for it, up to the loss timeout)
            controller.onControllerThreadWhenLive(() -> handle(dw0));
            post(q);
        });
    }

    private void handle(int dw0) {
        int type = dw0 & 7;
        int info = (dw0 >>> 8) & 0xff;
        int lid = (dw0 >>> 16) & 0xff;
        List<Integer> changed = new ArrayList<>();
        try {
            if (lid == LogPage.CHANGED_NAMESPACE_LIST) {
                ByteBuffer page = Flyweight.allocate(4096);
                controller.admin(Command.getLogPage(lid, 0, page, 4096, false));
                for (int at = 0; at < 4096 && page.getInt(at) != 0; at += 4) {
                    changed.add(page.getInt(at));
                }
                controller.refreshNamespaces();
            } else if (lid == LogPage.RESERVATION_NOTIFICATION) {
                // one notice per read: read on while the page says more are waiting (it keeps 64 at most)
                ByteBuffer page = Flyweight.allocate(LogPage.RESERVATION_NOTIFICATION_SIZE);
                for (int i = 0; i < 64; i++) {
                    controller.admin(Command.getLogPage(lid, 0, page.clear(), LogPage.RESERVATION_NOTIFICATION_SIZE, false));
                    if (page.get(8) == 0 || page.get(9) == 0) {
                        break;
                    }
                }
            } else if (lid != 0 && lid != LogPage.DISCOVERY) {
                // read the page the event names, without RAE, so the controller reports such events again
                int len = lid == LogPage.ERROR_INFORMATION ? LogPage.ERROR_ENTRY_SIZE : lid == LogPage.ANA ? 4096 : 512;
                controller.admin(Command.getLogPage(lid, 0, Flyweight.allocate(len), len, false));
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "handling event " + Integer.toHexString(dw0) + " from "
                    + controller.uri() + ": " + e);
        }
        Controller.AsyncEvent event = new Controller.AsyncEvent(type, info, lid, changed);
        for (Consumer<Controller.AsyncEvent> l : listeners) {
            try {
                l.accept(event);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "event listener failed: " + e);
            }
        }
    }
}
