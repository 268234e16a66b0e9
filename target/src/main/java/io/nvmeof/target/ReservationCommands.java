package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;

/**
 * The four reservation commands on an I/O queue (NVM Command Set 1.0 and Base 2.x, 7.x): they
 * parse their fields and keys, apply them to the namespace's {@link Reservations} on the queue's
 * event loop (nothing in them blocks), and answer.
 */
final class ReservationCommands {
    /** Reservation Report's extended data structure: a 64-byte header, then 64 bytes per registrant. */
    static final int EXTENDED_HEADER = 64;
    static final int EXTENDED_ENTRY = 64;

    private ReservationCommands() {
    }

    static void execute(Request r, Controller c) {
        Namespace ns = r.namespace;
        Reservations res = ns.reservations();
        int cdw10 = r.sqe.cdw10();
        int opcode = r.sqe.opcode();
        if (opcode == NvmOpcode.RESERVATION_REPORT.code) {
            report(r, res.state());
            return;
        }
        ByteBuf d = r.data;
        long key1 = d.getLongLE(r.dataOffset);
        int action = cdw10 & 7;
        boolean iekey = (cdw10 & 8) != 0;
        int rtype = cdw10 >>> 8 & 0xff;
        UUID host = c.hostId();
        Reservations.Outcome o;
        if (opcode == NvmOpcode.RESERVATION_REGISTER.code) {
            o = res.register(host, c.hostNqn(), action, iekey, cdw10 >>> 30, key1, d.getLongLE(r.dataOffset + 8));
        } else if (opcode == NvmOpcode.RESERVATION_ACQUIRE.code) {
            o = res.acquire(host, action, iekey, rtype, key1, d.getLongLE(r.dataOffset + 8));
        } else {
            o = res.release(host, action, iekey, rtype, key1);
        }
        r.queue.complete(r, o.status());
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
        ByteBuffer page = Flyweight.allocate(EXTENDED_HEADER + EXTENDED_ENTRY * regs.size());
        page.putInt(0, s.generation());
        page.put(4, (byte) s.type());
        page.putShort(5, (short) regs.size());
        page.put(9, (byte) (s.ptpl() ? 1 : 0));
        int at = EXTENDED_HEADER;
        for (Reservations.Registrant g : regs) {
            page.putShort(at, (short) 0xffff); // a registrant is a host, not one of its controllers (dynamic model)
            page.put(at + 2, (byte) (s.holds(g.hostId()) ? 1 : 0));
            page.putLong(at + 8, g.key());
            // the Host Identifier in the byte order it came in (Connect data)
            page.putLong(at + 16, Long.reverseBytes(g.hostId().getMostSignificantBits()));
            page.putLong(at + 24, Long.reverseBytes(g.hostId().getLeastSignificantBits()));
            at += EXTENDED_ENTRY;
        }
        AdminCommands.reply(r, page, 0);
    }
}
