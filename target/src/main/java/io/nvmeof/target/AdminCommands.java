package io.nvmeof.target;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SmartLog;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The admin command set (NVMe Base 2.0, 5) as far as an NVMe-oF I/O controller needs it.
 * Runs on the admin queue's event loop; the admin path may allocate, the I/O path may not.
 */
final class AdminCommands {
    /** Log page identifiers (Base 2.0, Figure 202). */
    static final int LOG_ERROR = 0x01;
    static final int LOG_SMART = 0x02;
    static final int LOG_FIRMWARE_SLOT = 0x03;
    /** AERL + 1: Asynchronous Event Requests a controller holds. */
    static final int AER_LIMIT = 4;
    private static final int BROADCAST_NSID = 0xffffffff;

    private AdminCommands() {
    }

    /** The admin commands of an I/O controller. */
    static final CommandSet SET = new CommandSet("admin",
            new CommandSet.Handler(AdminOpcode.IDENTIFY.code, "Identify", AdminCommands::identify),
            new CommandSet.Handler(AdminOpcode.GET_LOG_PAGE.code, "Get Log Page", AdminCommands::getLogPage),
            new CommandSet.Handler(AdminOpcode.SET_FEATURES.code, "Set Features", AdminCommands::setFeatures),
            new CommandSet.Handler(AdminOpcode.GET_FEATURES.code, "Get Features", AdminCommands::getFeatures),
            new CommandSet.Handler(AdminOpcode.KEEP_ALIVE.code, "Keep Alive", AdminCommands::keepAlive),
            new CommandSet.Handler(AdminOpcode.ASYNC_EVENT_REQUEST.code, "Asynchronous Event Request",
                    AdminCommands::asyncEventRequest),
            new CommandSet.Handler(AdminOpcode.ABORT.code, "Abort", AdminCommands::abort));

    static void keepAlive(Request r, Controller c) {
        r.queue.complete(r, Status.SUCCESS);
    }

    static void asyncEventRequest(Request r, Controller c) {
        if (!c.asyncEventRequest(r)) { // held until an event occurs, or dropped with the queue
            r.queue.complete(r, Status.AER_LIMIT_EXCEEDED);
        }
    }

    /**
     * Abort (CDW10: SQID 15:0, CID 31:16). Held Asynchronous Event Requests can be aborted;
     * anything else is already on its way (DW0 bit 0 set: not aborted).
     */
    private static void abort(Request r, Controller c) {
        QueuePair q = r.queue;
        int sqid = r.sqe.cdw10() & 0xffff;
        int cid = r.sqe.cdw10() >>> 16;
        Request victim = null;
        if (sqid == 0) {
            for (Request aer : c.asyncEvents) {
                if (aer.cid() == cid) {
                    victim = aer;
                }
            }
        }
        if (victim != null) {
            c.asyncEvents.remove(victim);
            q.complete(victim, Status.ABORT_REQUESTED);
            r.result = 0;
        } else {
            r.result = 1;
        }
        q.complete(r, Status.SUCCESS);
    }

    /** Copies {@code page} into the request's data (up to the host's buffer) and completes it. */
    static void reply(Request r, ByteBuffer page, int from) {
        QueuePair q = r.queue;
        if (r.direction != Request.XFER_C2H || r.length == 0) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        int n = Math.max(0, Math.min(r.length, page.capacity() - from));
        r.data = q.transport().allocateData(r, r.length);
        if (r.data == null) {
            q.complete(r, Status.COMMAND_INTERRUPTED);
            return;
        }
        r.data.setBytes(r.dataOffset, page.duplicate().position(from).limit(from + n));
        if (n < r.length) {
            r.data.setZero(r.dataOffset + n, r.length - n);
        }
        r.c2hLength = r.length;
        q.complete(r, Status.SUCCESS);
    }

    private static void identify(Request r, Controller c) {
        ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
        if (r.sqe.identifyCns() == IdentifyCns.CONTROLLER) {
            fillController(new IdentifyController().wrap(page, 0), c, r.queue().transport());
            reply(r, page, 0);
            return;
        }
        identifyNamespaces(r, c, page);
    }

    private static void identifyNamespaces(Request r, Controller c, ByteBuffer page) {
        SubmissionQueueEntry sqe = r.sqe;
        Subsystem s = c.subsystem();
        int nsid = sqe.nsid();
        switch (sqe.identifyCns()) {
            case IdentifyCns.NAMESPACE: {
                if (nsid == 0 || nsid == BROADCAST_NSID || Integer.toUnsignedLong(nsid) > maxNsid(s)) {
                    r.queue.complete(r, Status.INVALID_NAMESPACE);
                    return;
                }
                Namespace ns = s.namespace(nsid, c.hostNqn());
                if (ns != null) { // an inactive NSID (or another host's) reads as zeros
                    fillNamespace(new IdentifyNamespace().wrap(page, 0), ns, s);
                }
                break;
            }
            case IdentifyCns.ACTIVE_NAMESPACE_LIST: {
                if (nsid == 0xfffffffe || nsid == BROADCAST_NSID) {
                    r.queue.complete(r, Status.INVALID_NAMESPACE);
                    return;
                }
                int at = 0;
                for (Namespace ns : s.namespaces().tailMap(nsid, false).values()) {
                    if (at == IdentifyCns.DATA_SIZE) {
                        break;
                    }
                    if (!ns.visibleTo(c.hostNqn())) {
                        continue;
                    }
                    page.putInt(at, ns.nsid());
                    at += 4;
                }
                break;
            }
            case IdentifyCns.NAMESPACE_ID_DESCRIPTORS: {
                Namespace ns = s.namespace(nsid, c.hostNqn());
                if (ns == null) {
                    r.queue.complete(r, Status.INVALID_NAMESPACE);
                    return;
                }
                // NIDT 3 (UUID, 16 bytes) then NIDT 2 (NGUID, 16 bytes) (Base 2.0, Figure 279)
                page.put(0, (byte) 3).put(1, (byte) 16).put(4, ns.nguid());
                page.put(20, (byte) 2).put(21, (byte) 16).put(24, ns.nguid());
                break;
            }
            default:
                r.queue.complete(r, Status.INVALID_FIELD);
                return;
        }
        reply(r, page, 0);
    }

    static long maxNsid(Subsystem s) {
        Integer last = s.namespaces().isEmpty() ? null : s.namespaces().lastKey();
        return Math.max(Target.MAX_NSID, last == null ? 0 : Integer.toUnsignedLong(last));
    }

    /**
     * SGLS: SGLs without alignment needs; offsets for in-capsule data; keyed SGL data block
     * descriptors where the transport moves data by key (NVMe/RDMA: the Linux host requires them).
     */
    static int sgls(QueueTransport transport) {
        return 1 | 1 << 20 | (transport.acceptsDataDescriptor(Sgl.KEYED_ADDRESS) ? 1 << 2 : 0);
    }

    static void fillController(IdentifyController id, Controller c, QueueTransport transport) {
        Subsystem s = c.subsystem();
        Target t = c.target();
        int sgls = sgls(transport);
        id.vid(0).ssvid(0).serialNumber(s.serial()).modelNumber(s.model()).firmwareRevision(s.firmware())
                .rab(6).ieeeOui(s.ieeeOui()).cmic(1 << 1 | 1 << 3) // more than one controller may attach; ANA reporting
                .mdts(t.tuning().mdts()).cntlid(c.cntlid()).version(Registers.VERSION_1_4)
                .ctratt(1) // 128-bit Host Identifier: what reservations know a host by
                .oaes(Controller.AEC_NAMESPACE_ATTRIBUTE | Controller.AEC_ANA_CHANGE)
                // every ANA state reported; groups 1..128 (nvmet's); MNAN sizes the host's ANA log buffer
                .anatt(Target.ANA_TRANSITION_SECONDS).anacap(0x1f).anagrpmax(Port.MAX_ANA_GROUP)
                .nanagrpid(Port.MAX_ANA_GROUP).mnan(Target.MAX_NSID)
                .cqt((int) t.tuning().commandQuiesceTimeMillis()) // QueuePair.closed() holds to it
                .controllerType(IdentifyController.CNTRLTYPE_IO)
                .acl(3).aerl(AER_LIMIT - 1).frmw(1 << 1 | 1) // one slot, slot 1 read-only
                .lpa(1 | 1 << 1 | 1 << 2).elpe(Controller.ERROR_LOG_ENTRIES - 1).kas(10) // SMART per namespace // effects log, extended Get Log Page; keep alive in 1 s steps
                .sqes(0x66).cqes(0x44).maxcmd(t.tuning().maxQueueSize()).nn(maxNsid(s))
                // Compare, Dataset Management, Write Zeroes, Reservations, Copy (source range format 0)
                .oncs(1 | 1 << 2 | 1 << 3 | (s.offersReservations(null) ? 1 << 5 : 0) | 1 << 8).ocfs(1)
                // fused Compare and Write, atomic among this process's writers: not offered where
                // other processes (gateways) write the same storage
                .fuses(s.gateways() ? 0 : 1)
                .acwu(s.gateways() ? 0 : FusedCommands.ATOMIC_BLOCKS - 1)
                .vwc(1) // a volatile write cache: Flush matters
                .sgls(sgls)
                .subsystemNqn(s.nqn())
                .ioccsz((SubmissionQueueEntry.SIZE + t.tuning().inCapsuleDataSize()) / 16).iorcsz(1).icdoff(0).fcatt(0)
                .msdbd(1);
    }

    static void fillNamespace(IdentifyNamespace id, Namespace ns, Subsystem s) {
        byte[] nguid = ns.nguid();
        byte[] eui = new byte[8];
        System.arraycopy(nguid, 8, eui, 0, 8);
        // DLFEAT: deallocated blocks read as zeroes (001b) where the backend guarantees it; bit 3:
        // Write Zeroes may deallocate.
        id.dlfeat((ns.backend().deallocatedReadsZeroes() ? 1 : 0) | 1 << 3);
        id.nsze(ns.blocks()).ncap(ns.blocks()).nuse(ns.blocks()).nsfeat(0).nlbaf(0).flbas(0)
                .lbaFormat(0, 0, ns.blockShift(), 0).nmic(1).anagrpid(ns.anaGroup()).nsattr(ns.readOnly() ? 1 : 0).nguid(nguid).eui64(eui);
        // every type and NVMe 1.3's IEKEY, and Persist Through Power Loss where the target keeps
        // reservations; none where gateways serve it and do not share them (an RBD image of a
        // gateway group's has them in the cluster)
        id.rescap(!s.offersReservations(ns) ? 0 : 0x7e | 1 << 7 | (ns.reservations().ptplCapable() ? 1 : 0));
        id.mssrl(CopyCommand.maxRangeBlocks(ns.blockShift())).mcl(CopyCommand.maxCopyBlocks(ns.blockShift()))
                .msrc(CopyCommand.MAX_RANGES - 1);
    }

    /** Checks Get Log Page's length and offset against the request; null when they fit. */
    static Status checkLogPageRange(Request r) {
        long offset = LogPage.offset(r.sqe);
        return LogPage.length(r.sqe) != r.length || (offset & 3) != 0 || offset < 0 ? Status.INVALID_FIELD : null;
    }

    /** Replies with {@code page} from the command's offset, or Invalid Field past its end. */
    static void replyLogPage(Request r, ByteBuffer page) {
        long offset = LogPage.offset(r.sqe);
        if (offset >= page.capacity()) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        reply(r, page, (int) offset);
    }

    private static void getLogPage(Request r, Controller c) {
        SubmissionQueueEntry sqe = r.sqe;
        Status bad = checkLogPageRange(r);
        if (bad != null) {
            r.queue.complete(r, bad);
            return;
        }
        ByteBuffer page;
        switch (LogPage.lid(sqe)) {
            case LOG_ERROR:
                page = c.errorLogPage();
                break;
            case LOG_SMART:
                if (sqe.nsid() != 0 && sqe.nsid() != BROADCAST_NSID && c.subsystem().namespace(sqe.nsid(), c.hostNqn()) == null) {
                    r.queue.complete(r, Status.INVALID_NAMESPACE);
                    return;
                }
                page = Flyweight.allocate(SmartLog.SIZE);
                smartCounters(new SmartLog().<SmartLog>wrap(page, 0).compositeTemperature(298).availableSpare(100, 10)
                        .errorLogEntries(c.errorCount()), c, sqe.nsid());
                break;
            case LOG_FIRMWARE_SLOT:
                page = Flyweight.allocate(512);
                page.put(0, (byte) 1);          // AFI: slot 1 active
                byte[] fr = (c.subsystem().firmware() + "        ").substring(0, 8).getBytes(StandardCharsets.US_ASCII);
                page.put(8, fr);
                break;
            case LogPage.CHANGED_NAMESPACE_LIST:
                page = c.changedNamespaceLog(LogPage.retainAsyncEvent(sqe));
                break;
            case LogPage.COMMANDS_SUPPORTED_AND_EFFECTS:
                page = commandsSupportedAndEffects();
                break;
            case LogPage.RESERVATION_NOTIFICATION:
                page = c.reservationNotificationLog(LogPage.retainAsyncEvent(sqe));
                break;
            case LogPage.ANA:
                page = anaLog(c, r.queue.port(), (LogPage.lsp(sqe) & AnaLog.LSP_RGO) != 0);
                c.anaLogRead(LogPage.retainAsyncEvent(sqe));
                break;
            default:
                r.queue.complete(r, Status.INVALID_LOG_PAGE);
                return;
        }
        replyLogPage(r, page);
    }

    /**
     * SMART / Health counters (Base 2.0, Figure 207): data units read and written (thousands of
     * 512-byte units, rounded up) at bytes 32 and 48, host read and write commands at 64 and 80;
     * for one namespace or, with NSID FFFFFFFFh or 0, for all.
     */
    /** SMART counters of the namespaces {@code c}'s host sees (all of them for nsid 0 or FFFFFFFFh). */
    static void smartCounters(SmartLog page, Controller c, int nsid) {
        Subsystem s = c.subsystem();
        long rd = 0;
        long wr = 0;
        long rc = 0;
        long wc = 0;
        for (Namespace ns : s.namespaces().values()) {
            if ((nsid == 0 || nsid == BROADCAST_NSID || ns.nsid() == nsid) && ns.visibleTo(c.hostNqn())) {
                IoStats st = ns.stats();
                rd += st.bytes(IoStats.Op.READ);
                wr += st.bytes(IoStats.Op.WRITE);
                rc += st.succeeded(IoStats.Op.READ);
                wc += st.succeeded(IoStats.Op.WRITE);
            }
        }
        page.io(rd, wr, rc, wc);
    }

    /**
     * The ANA log (Base 2.0, 5.16.1.12) as seen through {@code port}: a descriptor for each group
     * the port was given a state for and each group a namespace this host sees is in, ascending,
     * with its state here and its namespaces (none with RGO, return groups only).
     */
    static ByteBuffer anaLog(Controller c, Port port, boolean groupsOnly) {
        TreeMap<Integer, List<Integer>> groups = new TreeMap<>();
        if (port != null) {
            for (int g : port.anaGroups()) {
                groups.put(g, new ArrayList<>());
            }
        }
        int nsids = 0;
        for (Namespace ns : c.subsystem().namespaces().values()) {
            if (ns.visibleTo(c.hostNqn())) {
                groups.computeIfAbsent(ns.anaGroup(), g -> new ArrayList<>()).add(ns.nsid());
                nsids++;
            }
        }
        long changeCount = c.target().ana().changeCount();
        ByteBuffer page = Flyweight.allocate(AnaLog.size(groups.size(), groupsOnly ? 0 : nsids));
        AnaLog.header(page, changeCount, groups.size());
        int at = AnaLog.HEADER_SIZE;
        for (Map.Entry<Integer, List<Integer>> e : groups.entrySet()) {
            AnaState state = port != null ? port.anaState(e.getKey()) : AnaState.OPTIMIZED;
            int[] list = e.getValue().stream().mapToInt(Integer::intValue).toArray();
            at = AnaLog.descriptor(page, at, e.getKey(), changeCount, state.code, list, groupsOnly ? 0 : list.length);
        }
        return page;
    }

    /** Commands Supported and Effects (Base 2.0, 5.16.1.6): CSUPP, and LBCC for commands that change data. */
    static ByteBuffer commandsSupportedAndEffects() {
        ByteBuffer page = Flyweight.allocate(LogPage.COMMANDS_EFFECTS_SIZE);
        int csupp = 1;
        for (CommandSet.Handler h : SET.handlers()) {
            page.putInt(h.opcode() * 4, csupp | h.effects());
        }
        for (CommandSet.Handler h : IoCommands.SET.handlers()) {
            page.putInt(1024 + h.opcode() * 4, csupp | h.effects());
        }
        return page;
    }

    static void setFeatures(Request r, Controller c) {
        SubmissionQueueEntry sqe = r.sqe;
        QueuePair q = r.queue;
        if (sqe.featureSave()) {
            q.complete(r, Status.FEATURE_NOT_SAVEABLE);
            return;
        }
        int cdw11 = sqe.cdw11();
        switch (sqe.featureId()) {
            case FeatureId.NUMBER_OF_QUEUES: {
                if (c.hasIoQueues()) {
                    // only before the first I/O queue is created (Base 2.0, 5.27.1.5)
                    q.complete(r, Status.COMMAND_SEQUENCE_ERROR);
                    return;
                }
                int nsq = sqe.requestedSubmissionQueues();
                int ncq = sqe.requestedCompletionQueues();
                if (nsq > 0xffff || ncq > 0xffff) { // 0's based FFFFh is not a count
                    q.complete(r, Status.INVALID_FIELD);
                    return;
                }
                int granted = Math.min(Math.max(nsq, ncq), c.target().tuning().maxIoQueues());
                c.grantIoQueues(granted);
                r.result = (granted - 1) | (long) (granted - 1) << 16;
                q.complete(r, Status.SUCCESS);
                return;
            }
            case FeatureId.ASYNC_EVENT_CONFIG: {
                c.asyncEventConfig = cdw11 & c.supportedAsyncEvents();
                q.complete(r, Status.SUCCESS);
                return;
            }
            case FeatureId.VOLATILE_WRITE_CACHE:
                q.complete(r, (cdw11 & 1) == 1 ? Status.SUCCESS : Status.FEATURE_NOT_CHANGEABLE);
                return;
            case FeatureId.HOST_IDENTIFIER:
                q.complete(r, Status.COMMAND_SEQUENCE_ERROR); // set by Connect on fabrics
                return;
            case FeatureId.KEEP_ALIVE_TIMER:
                c.keepAlive(r.queue.target().tuning().grantedKato(cdw11 & 0xffffffffL, c.subsystem().isDiscovery()));
                q.complete(r, Status.SUCCESS);
                return;
            case FeatureId.ARBITRATION:
                c.arbitration = cdw11;
                q.complete(r, Status.SUCCESS);
                return;
            case FeatureId.POWER_MANAGEMENT:
                if ((cdw11 & 0x1f) != 0) { // NPSS is 0: power state 0 is the only one
                    q.complete(r, Status.INVALID_FIELD);
                    return;
                }
                c.powerManagement = cdw11 & 0xff;
                q.complete(r, Status.SUCCESS);
                return;
            case FeatureId.TEMPERATURE_THRESHOLD: {
                int tmpsel = (cdw11 >>> 16) & 0xf;
                int thsel = (cdw11 >>> 20) & 0x3;
                if (tmpsel != 0 || thsel > 1) { // only the composite temperature, over or under
                    q.complete(r, Status.INVALID_FIELD);
                    return;
                }
                c.temperatureThreshold[thsel] = cdw11 & 0xffff;
                q.complete(r, Status.SUCCESS);
                return;
            }
            case FeatureId.RESERVATION_NOTIFICATION_MASK:
            case FeatureId.RESERVATION_PERSISTENCE:
                ReservationCommands.setFeature(r, c);
                return;
            case FeatureId.ERROR_RECOVERY:
                if ((cdw11 & 1 << 16) != 0) { // DULBE: deallocated blocks are not errors here
                    q.complete(r, Status.INVALID_FIELD);
                    return;
                }
                c.errorRecovery = cdw11 & 0xffff;
                q.complete(r, Status.SUCCESS);
                return;
            default:
                q.complete(r, Status.INVALID_FIELD);
        }
    }

    /** Get Features SEL 011b: the capabilities of a feature (Base 2.0, Figure 318). */
    private static final int SEL_SUPPORTED_CAPABILITIES = 3;
    private static final int CAPABILITY_CHANGEABLE = 1 << 2;
    private static final int CAPABILITY_NAMESPACE_SPECIFIC = 1 << 1;

    static void getFeatures(Request r, Controller c) {
        SubmissionQueueEntry sqe = r.sqe;
        QueuePair q = r.queue;
        if (sqe.featureSelect() == SEL_SUPPORTED_CAPABILITIES) {
            switch (sqe.featureId()) {
                case FeatureId.NUMBER_OF_QUEUES:
                case FeatureId.ASYNC_EVENT_CONFIG:
                    r.result = CAPABILITY_CHANGEABLE;
                    break;
                case FeatureId.KEEP_ALIVE_TIMER:
                case FeatureId.TEMPERATURE_THRESHOLD:
                case FeatureId.ARBITRATION:
                case FeatureId.POWER_MANAGEMENT:
                case FeatureId.ERROR_RECOVERY:
                    r.result = CAPABILITY_CHANGEABLE;
                    break;
                case FeatureId.VOLATILE_WRITE_CACHE:
                case FeatureId.HOST_IDENTIFIER:
                    r.result = 0;
                    break;
                case FeatureId.RESERVATION_NOTIFICATION_MASK:
                case FeatureId.RESERVATION_PERSISTENCE:
                    r.result = CAPABILITY_CHANGEABLE | CAPABILITY_NAMESPACE_SPECIFIC;
                    break;
                default:
                    q.complete(r, Status.INVALID_FIELD);
                    return;
            }
            q.complete(r, Status.SUCCESS);
            return;
        }
        // SEL current, default and saved read alike: nothing here is saveable.
        switch (sqe.featureId()) {
            case FeatureId.NUMBER_OF_QUEUES: {
                int n = c.grantedIoQueues() - 1;
                r.result = n | (long) n << 16;
                break;
            }
            case FeatureId.KEEP_ALIVE_TIMER:
                r.result = c.katoMillis();
                break;
            case FeatureId.VOLATILE_WRITE_CACHE:
                r.result = 1;
                break;
            case FeatureId.ASYNC_EVENT_CONFIG:
                r.result = c.asyncEventConfig & 0xffffffffL;
                break;
            case FeatureId.TEMPERATURE_THRESHOLD: {
                int thsel = (sqe.cdw11() >>> 20) & 0x3;
                if (((sqe.cdw11() >>> 16) & 0xf) != 0 || thsel > 1) {
                    q.complete(r, Status.INVALID_FIELD);
                    return;
                }
                r.result = c.temperatureThreshold[thsel] | thsel << 20;
                break;
            }
            case FeatureId.ARBITRATION:
                r.result = c.arbitration & 0xffffffffL;
                break;
            case FeatureId.POWER_MANAGEMENT:
                r.result = c.powerManagement;
                break;
            case FeatureId.ERROR_RECOVERY:
                r.result = c.errorRecovery;
                break;
            case FeatureId.RESERVATION_NOTIFICATION_MASK:
            case FeatureId.RESERVATION_PERSISTENCE:
                ReservationCommands.getFeature(r, c);
                return;
            case FeatureId.HOST_IDENTIFIER: {
                if ((sqe.cdw11() & 1) == 0) {
                    q.complete(r, Status.INVALID_FIELD); // fabrics host IDs are 128-bit: EXHID must be set
                    return;
                }
                ByteBuffer id = ByteBuffer.allocate(16);
                id.putLong(c.hostId().getMostSignificantBits()).putLong(c.hostId().getLeastSignificantBits());
                reply(r, id, 0);
                return;
            }
            default:
                q.complete(r, Status.INVALID_FIELD);
                return;
        }
        q.complete(r, Status.SUCCESS);
    }

}
