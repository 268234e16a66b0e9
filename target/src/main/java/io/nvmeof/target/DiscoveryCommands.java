package io.nvmeof.target;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import java.nio.ByteBuffer;

/**
 * The discovery controller's command set (NVMe-oF 1.1, 5): Identify Controller only, the
 * discovery log as its one log page, Keep Alive Timer and Asynchronous Event Configuration as
 * its only features, Keep Alive and Asynchronous Event Requests, and, for a central discovery
 * controller, Discovery Information Management (TP8010); no namespaces, no I/O queues, no Abort. Runs on the admin queue's event loop.
 */
final class DiscoveryCommands {
    private static final RateLimitedLog MALFORMED = new RateLimitedLog(System.getLogger(Target.class.getName()));

    private DiscoveryCommands() {
    }

    static final CommandSet SET = new CommandSet("discovery",
            new CommandSet.Handler(AdminOpcode.IDENTIFY.code, "Identify", DiscoveryCommands::identify),
            new CommandSet.Handler(AdminOpcode.GET_LOG_PAGE.code, "Get Log Page", DiscoveryCommands::getLogPage),
            new CommandSet.Handler(AdminOpcode.SET_FEATURES.code, "Set Features", DiscoveryCommands::setFeatures),
            new CommandSet.Handler(AdminOpcode.GET_FEATURES.code, "Get Features", DiscoveryCommands::getFeatures),
            // the same as an I/O controller's
            new CommandSet.Handler(AdminOpcode.DISCOVERY_INFO_MGMT.code, "Discovery Information Management",
                    DiscoveryCommands::discoveryInformation),
            AdminCommands.SET.handler(AdminOpcode.KEEP_ALIVE.code),
            AdminCommands.SET.handler(AdminOpcode.ASYNC_EVENT_REQUEST.code));

    private static void identify(Request r, Controller c) {
        if (r.sqe.identifyCns() != IdentifyCns.CONTROLLER) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
        fillController(new IdentifyController().wrap(page, 0), c, r.queue().transport());
        AdminCommands.reply(r, page, 0);
    }

    static void fillController(IdentifyController id, Controller c, QueueTransport transport) {
        Subsystem s = c.subsystem();
        id.serialNumber(s.serial()).modelNumber(s.model()).firmwareRevision(s.firmware()).cntlid(c.cntlid())
                .version(Registers.VERSION_1_4).controllerType(IdentifyController.CNTRLTYPE_DISCOVERY)
                .aerl(AdminCommands.AER_LIMIT - 1).lpa(1 << 2).elpe(0).kas(10).maxcmd(c.target().tuning().maxQueueSize()).nn(0)
                .oaes(Controller.AEC_DISCOVERY_LOG_CHANGE)
                .sgls(AdminCommands.sgls(transport)).subsystemNqn(s.nqn()).mdts(0)
                .dctype(c.target().options().get(Settings.CDC) ? IdentifyController.DCTYPE_CDC
                        : IdentifyController.DCTYPE_NOT_REPORTED);
    }

    /** The most data one entry of a registration may take: an extended entry, a host identifier, a symbolic name, spare. */
    private static final int MOST_PER_ENTRY = 2048;

    /**
     * Whether a Discovery Information Management command may bring its data, checked before a
     * byte of it moves (no R2T, no buffer): Invalid Command Opcode where this target is no central
     * discovery controller (as a controller without the command answers), Access Denied for a host
     * {@code cdc_registrants} does not list, Data SGL Length Invalid for more data than the most
     * entries one registrant may hold can take; null if it may.
     */
    static Status admitInformation(Request r, Controller c) {
        Target t = c.target();
        if (!t.options().get(Settings.CDC)) {
            return Status.INVALID_OPCODE;
        }
        Status refused = t.centralDiscovery().admit(c.hostNqn());
        if (refused != null) {
            return refused;
        }
        long most = DiscoveryInformation.HEADER_SIZE + (long) t.options().get(Settings.MAX_CDC_REGISTRATIONS_PER_HOST)
                * MOST_PER_ENTRY;
        return r.length > most ? Status.DATA_SGL_LENGTH_INVALID : null;
    }

    /**
     * Discovery Information Management (TP8010): register, deregister or update what the
     * command's data says, where this target is a central discovery controller (checked again
     * here: a reload may have come while the data moved).
     */
    private static void discoveryInformation(Request r, Controller c) {
        Status refused = admitInformation(r, c);
        if (refused != null) {
            r.queue.complete(r, refused);
            return;
        }
        int tas = r.sqe.cdw10() & 0xf;
        if (tas > DiscoveryInformation.TAS_UPDATE) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        if (r.data == null || r.length < DiscoveryInformation.HEADER_SIZE) {
            r.queue.complete(r, Status.INVALID_DISCOVERY_INFO);
            return;
        }
        ByteBuffer copy = ByteBuffer.allocate(r.length); // a rare command: a heap copy, no direct memory to reserve
        r.data.getBytes(r.dataOffset, copy);
        DiscoveryInformation info;
        try {
            info = DiscoveryInformation.parse(copy, r.length, c.target().options().get(Settings.MAX_CDC_REGISTRATIONS_PER_HOST));
        } catch (DiscoveryInformation.MalformedException e) {
            MALFORMED.log(System.Logger.Level.WARNING, "central discovery: malformed registration from {0} ({1}): {2}",
                    c.hostNqn(), r.queue.transport().peer(), e.getMessage());
            r.queue.complete(r, Status.INVALID_DISCOVERY_INFO);
            return;
        }
        r.queue.complete(r, c.target().centralDiscovery().apply(tas, info, c, r.queue.transport().remoteAddress()));
    }

    private static void getLogPage(Request r, Controller c) {
        Status bad = AdminCommands.checkLogPageRange(r);
        if (bad == null && LogPage.lid(r.sqe) != LogPage.DISCOVERY) {
            bad = Status.INVALID_LOG_PAGE;
        }
        if (bad != null) {
            r.queue.complete(r, bad);
            return;
        }
        ByteBuffer window = DiscoveryLog.window(c.target(), c.hostNqn(), r.queue.port(), r.queue.transport().localAddress(),
                LogPage.offset(r.sqe), r.length);
        if (window == null) {
            r.queue.complete(r, Status.INVALID_FIELD); // an offset past the log's end
            return;
        }
        c.discoveryLogRead(LogPage.retainAsyncEvent(r.sqe));
        AdminCommands.reply(r, window, 0);
    }

    /** The features a discovery controller has (NVMe-oF 1.1, 5.2). */
    private static boolean hasFeature(int fid) {
        return fid == FeatureId.KEEP_ALIVE_TIMER || fid == FeatureId.ASYNC_EVENT_CONFIG;
    }

    private static void setFeatures(Request r, Controller c) {
        if (!hasFeature(r.sqe.featureId())) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        AdminCommands.setFeatures(r, c);
    }

    private static void getFeatures(Request r, Controller c) {
        if (!hasFeature(r.sqe.featureId())) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        AdminCommands.getFeatures(r, c);
    }
}
