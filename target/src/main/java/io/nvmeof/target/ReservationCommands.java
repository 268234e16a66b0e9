package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Reservation;
import io.nvmeof.protocol.Status;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * The four reservation commands on an I/O queue (NVM Command Set 1.0 and Base 2.x, 7.x): they
 * parse their fields and keys, apply them to the namespace's {@link Reservations} on the queue's
 * event loop (nothing in them blocks), and answer.
 */
final class ReservationCommands {
    private static final System.Logger LOG = System.getLogger(ReservationCommands.class.getName());

    private ReservationCommands() {
    }

    static void execute(Request r, Controller c) {
        Namespace ns = r.namespace;
        Reservations res = ns.reservations();
        SharedReservations shared = ns.shared();
        int cdw10 = r.sqe.cdw10();
        int opcode = r.sqe.opcode();
        if (opcode == NvmOpcode.RESERVATION_REPORT.code) {
            if (shared == null) {
                report(r, res.state());
            } else { // as the cluster has it now, whichever gateway changed it last
                shared.current().whenComplete((s, e) -> onLoop(r, () -> {
                    if (e == null) {
                        report(r, s);
                    } else {
                        failedShared(r, c, e);
                    }
                }));
            }
            return;
        }
        ByteBuf d = r.data;
        long key1 = d.getLongLE(r.dataOffset);
        long key2 = opcode == NvmOpcode.RESERVATION_RELEASE.code ? 0 : d.getLongLE(r.dataOffset + 8);
        int action = cdw10 & 7;
        boolean iekey = (cdw10 & 8) != 0;
        int rtype = cdw10 >>> 8 & 0xff;
        UUID host = c.hostId();
        String hostNqn = c.hostNqn();
        Function<Reservations, Reservations.Outcome> step;
        if (opcode == NvmOpcode.RESERVATION_REGISTER.code) {
            step = x -> x.register(host, hostNqn, action, iekey, cdw10 >>> 30, key1, key2);
        } else if (opcode == NvmOpcode.RESERVATION_ACQUIRE.code) {
            step = x -> x.acquire(host, hostNqn, action, iekey, rtype, key1, key2);
        } else {
            step = x -> x.release(host, hostNqn, action, iekey, rtype, key1);
        }
        if (shared == null) {
            finishOrDrain(r, c, res, action, step.apply(res));
        } else { // read, step and write on the cluster, off the loop; every gateway has it when this completes
            shared.run(step).whenComplete((o, e) -> onLoop(r, () -> {
                if (e == null) {
                    finishOrDrain(r, c, res, action, o);
                } else {
                    failedShared(r, c, e);
                }
            }));
        }
    }

    private static void finishOrDrain(Request r, Controller c, Reservations res, int action, Reservations.Outcome o) {
        if (r.sqe.opcode() == NvmOpcode.RESERVATION_ACQUIRE.code && action == Reservation.PREEMPT_AND_ABORT
                && !o.preempted().isEmpty()) {
            // Commands of theirs not yet executing never will; those in a backend are waited
            // for, so that once this completes nothing of the preempted hosts' can still land.
            c.subsystem().drain(r.namespace, o.preempted(), () -> onLoop(r, () -> finish(r, c, res, o)));
            return;
        }
        finish(r, c, res, o);
    }

    /** A shared reservation could not be read or changed: the host hears a path error and may try another gateway. */
    private static void failedShared(Request r, Controller c, Throwable e) {
        LOG.log(System.Logger.Level.WARNING, "reservation of namespace " + Integer.toUnsignedString(r.namespace.nsid())
                + " of " + c.subsystem().nqn() + ": " + (e.getCause() != null ? e.getCause() : e).getMessage());
        r.queue.complete(r, Status.ANA_INACCESSIBLE);
    }

    /**
     * Sends the outcome's notices to the controllers of the hosts owed them, then completes the
     * command once the state is as durable as its PTPL asks (at once, unless a store must write).
     */
    private static void finish(Request r, Controller c, Reservations res, Reservations.Outcome o) {
        for (Reservations.Notice n : o.notices()) {
            c.subsystem().reservationNotice(n.hostId(), r.namespace.nsid(), n.type());
        }
        if (!o.changed()) {
            r.queue.complete(r, o.status());
            return;
        }
        CompletableFuture<Void> stored = res.stored();
        if (stored.isDone() && !stored.isCompletedExceptionally()) {
            r.queue.complete(r, o.status());
            return;
        }
        stored.whenComplete((v, e) -> {
            if (e != null) {
                LOG.log(System.Logger.Level.ERROR, "reservation of namespace " + r.namespace.nsid() + " of "
                        + c.subsystem().nqn() + " changed but could not be kept: " + e.getMessage());
            }
            Status s = e == null ? o.status() : Status.INTERNAL_ERROR;
            onLoop(r, () -> r.queue.complete(r, s));
        });
    }

    /** Runs {@code then} for {@code r} on its queue's loop, unless the queue closed meanwhile. */
    private static void onLoop(Request r, Runnable then) {
        try {
            r.queue.transport().eventLoop().execute(() -> {
                if (!r.queue.dropIfClosed(r)) {
                    then.run();
                }
            });
        } catch (RejectedExecutionException x) {
            r.releaseData(); // the loops are gone, and the connection with them
        }
    }

    /** Set Features Reservation Notification Mask (82h) and Reservation Persistence (83h), for one namespace or all. */
    static void setFeature(Request r, Controller c) {
        int nsid = r.sqe.nsid();
        int cdw11 = r.sqe.cdw11();
        List<Namespace> targets = namespaces(r, c, nsid);
        if (targets == null) {
            return;
        }
        if (r.sqe.featureId() == FeatureId.RESERVATION_NOTIFICATION_MASK) {
            for (Namespace ns : targets) {
                c.reservationMask(ns.nsid(), cdw11 & NOTICE_MASK);
            }
            r.queue.complete(r, Status.SUCCESS);
            return;
        }
        if (targets.size() != 1) {
            r.queue.complete(r, Status.INVALID_FIELD); // persistence is set one namespace at a time
            return;
        }
        Namespace ns = targets.get(0);
        Reservations res = ns.reservations();
        boolean ptpl = (cdw11 & 1) != 0;
        SharedReservations shared = ns.shared();
        Reservations.Outcome local = shared == null ? res.persistence(ptpl) : null;
        if (local != null && !local.changed()) {
            r.queue.complete(r, local.status());
            return;
        }
        r.namespace = ns;
        if (!ns.acquire()) {
            r.namespace = null;
            r.queue.complete(r, Status.INVALID_NAMESPACE);
            return;
        }
        if (shared == null) {
            finish(r, c, res, local);
        } else { // a step on the cluster's state, as every other reservation change there
            shared.run(x -> x.persistence(ptpl)).whenComplete((o, e) -> onLoop(r, () -> {
                if (e == null) {
                    finish(r, c, res, o);
                } else {
                    failedShared(r, c, e);
                }
            }));
        }
    }

    /** Get Features 82h and 83h: one namespace's mask or PTPL. */
    static void getFeature(Request r, Controller c) {
        int nsid = r.sqe.nsid();
        List<Namespace> targets = namespaces(r, c, nsid);
        if (targets == null) {
            return;
        }
        if (targets.size() != 1) {
            r.queue.complete(r, Status.INVALID_FIELD);
            return;
        }
        Namespace ns = targets.get(0);
        r.result = r.sqe.featureId() == FeatureId.RESERVATION_NOTIFICATION_MASK ? c.reservationMask(ns.nsid())
                : ns.reservations().state().ptpl() ? 1 : 0;
        r.queue.complete(r, Status.SUCCESS);
    }

    /** Bits 1..3 of CDW11: registration preempted, reservation released, reservation preempted. */
    private static final int NOTICE_MASK = 0xe;

    /** The namespaces {@code nsid} names for the host (all it sees for FFFFFFFFh); null once answered with an error. */
    private static List<Namespace> namespaces(Request r, Controller c, int nsid) {
        Subsystem s = c.subsystem();
        if (!s.offersReservations(null)) {
            r.queue.complete(r, Status.INVALID_FIELD); // no reservations where gateways serve it and do not share them
            return null;
        }
        if (nsid == 0xffffffff) {
            List<Namespace> l = new ArrayList<>();
            for (Namespace ns : s.namespaces().values()) {
                if (ns.visibleTo(c.hostNqn())) {
                    l.add(ns);
                }
            }
            return l;
        }
        Namespace ns = s.namespace(nsid, c.hostNqn());
        if (ns == null) {
            r.queue.complete(r, Status.INVALID_NAMESPACE);
            return null;
        }
        return List.of(ns);
    }

    /**
     * Reservation Report: only the extended data structure (EDS), since a fabrics host's identifier
     * has 128 bits; without EDS, Host Identifier Inconsistent Format, as nvmet and SPDK answer.
     * NUMD's length (the SGL's) may cut the structure short; REGCTL still counts every registrant.
     */
    private static void report(Request r, Reservations.State s) {
        if ((r.sqe.cdw11() & 1) == 0) {
            r.queue.complete(r, Status.HOST_ID_INCONSISTENT);
            return;
        }
        List<Reservations.Registrant> regs = s.registrants();
        ByteBuffer page = Flyweight.allocate(Reservation.EXTENDED_HEADER + Reservation.EXTENDED_ENTRY * regs.size());
        page.putInt(0, s.generation());
        page.put(4, (byte) s.type());
        page.putShort(5, (short) regs.size());
        page.put(9, (byte) (s.ptpl() ? 1 : 0));
        int at = Reservation.EXTENDED_HEADER;
        for (Reservations.Registrant g : regs) {
            page.putShort(at, (short) 0xffff); // a registrant is a host, not one of its controllers (dynamic model)
            page.put(at + 2, (byte) (s.holds(g.hostId()) ? 1 : 0));
            page.putLong(at + 8, g.key());
            // the Host Identifier in the byte order it came in (Connect data)
            page.putLong(at + 16, Long.reverseBytes(g.hostId().getMostSignificantBits()));
            page.putLong(at + 24, Long.reverseBytes(g.hostId().getLeastSignificantBits()));
            at += Reservation.EXTENDED_ENTRY;
        }
        AdminCommands.reply(r, page, 0);
    }
}
