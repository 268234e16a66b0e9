package io.nvmeof.target;

import static io.nvmeof.protocol.Reservation.ACQUIRE;
import static io.nvmeof.protocol.Reservation.CLEAR;
import static io.nvmeof.protocol.Reservation.CPTPL_CLEAR;
import static io.nvmeof.protocol.Reservation.CPTPL_NO_CHANGE;
import static io.nvmeof.protocol.Reservation.CPTPL_SET;
import static io.nvmeof.protocol.Reservation.EXCLUSIVE_ACCESS;
import static io.nvmeof.protocol.Reservation.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY;
import static io.nvmeof.protocol.Reservation.PREEMPT;
import static io.nvmeof.protocol.Reservation.PREEMPT_AND_ABORT;
import static io.nvmeof.protocol.Reservation.REGISTER;
import static io.nvmeof.protocol.Reservation.REGISTRATION_PREEMPTED;
import static io.nvmeof.protocol.Reservation.RELEASE;
import static io.nvmeof.protocol.Reservation.REPLACE;
import static io.nvmeof.protocol.Reservation.RESERVATION_PREEMPTED;
import static io.nvmeof.protocol.Reservation.RESERVATION_RELEASED;
import static io.nvmeof.protocol.Reservation.UNREGISTER;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE_ALL_REGISTRANTS;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The reservation state machine, command by command, as NVMe Base 2.x, nvmet and SPDK have it. */
class ReservationsTest {
    static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    static final UUID C = UUID.fromString("00000000-0000-0000-0000-00000000000c");
    static final int READ = NvmOpcode.READ.code;
    static final int WRITE = NvmOpcode.WRITE.code;

    final Reservations r = new Reservations(true);

    /** Each host's NQN; a host registers under it. */
    static String nqn(UUID host) {
        return "nqn.2026-11.io.nvmeof:host-" + host.getLeastSignificantBits() + "-" + host.getMostSignificantBits();
    }

    private Status register(UUID host, long key) {
        return r.register(host, nqn(host), REGISTER, false, CPTPL_NO_CHANGE, 0, key).status();
    }

    @Test
    void registrationIsByHostIdentifierAndKeysAreChecked() {
        assertEquals(Status.SUCCESS, register(A, 0xa1));
        assertEquals(Status.SUCCESS, register(A, 0xa1), "again with the same key");
        assertEquals(Status.RESERVATION_CONFLICT, register(A, 0xa2), "again with another key");
        assertEquals(Status.INVALID_FIELD, register(B, 0), "a zero key");
        assertEquals(1, r.state().generation());
        assertEquals(Status.RESERVATION_CONFLICT, r.register(A, nqn(A), REPLACE, false, 0, 0xbad, 0xa3).status());
        assertEquals(Status.SUCCESS, r.register(A, nqn(A), REPLACE, false, 0, 0xa1, 0xa3).status());
        assertEquals(0xa3, r.state().registrant(A).key());
        assertEquals(Status.SUCCESS, r.register(A, nqn(A), REPLACE, true, 0, 0, 0xa4).status(), "IEKEY");
        assertEquals(Status.RESERVATION_CONFLICT, r.register(B, nqn(B), REPLACE, false, 0, 0, 0xb1).status());
        assertEquals(Status.SUCCESS, r.register(B, nqn(B), REPLACE, true, 0, 0, 0xb1).status(), "Replace with IEKEY registers");
        assertEquals(Status.RESERVATION_CONFLICT, r.register(B, nqn(B), UNREGISTER, false, 0, 0xbad, 0).status());
        assertEquals(Status.SUCCESS, r.register(B, nqn(B), UNREGISTER, false, 0, 0xb1, 0).status());
        assertNull(r.state().registrant(B));
        assertEquals(5, r.state().generation());
        assertEquals(Status.INVALID_FIELD, r.register(A, nqn(A), 3, false, 0, 0, 1).status(), "RREGA 3");
    }

    @Test
    void registrantsAreCapped() {
        for (int i = 0; i < Reservations.MAX_REGISTRANTS; i++) {
            assertEquals(Status.SUCCESS, register(new UUID(1, i), i + 1));
        }
        assertEquals(Status.INTERNAL_ERROR, register(new UUID(2, 0), 99));
        assertEquals(Reservations.MAX_REGISTRANTS, r.state().registrants().size());
    }

    @Test
    void writeExclusiveLetsOthersReadAndTheHolderWrite() {
        register(A, 1);
        register(B, 2);
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 9, 0).status(), "wrong key");
        assertEquals(Status.SUCCESS, r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0).status());
        assertEquals(Status.SUCCESS, r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0).status(), "again: no error");
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(A, nqn(A), ACQUIRE, false, EXCLUSIVE_ACCESS, 1, 0).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(B, nqn(B), ACQUIRE, false, WRITE_EXCLUSIVE, 2, 0).status());
        assertNull(r.check(A, nqn(A), WRITE));
        assertNull(r.check(B, nqn(B), READ));
        assertNull(r.check(C, nqn(C), READ));
        assertEquals(Status.RESERVATION_CONFLICT, r.check(B, nqn(B), WRITE), "a registrant is not the holder");
        assertEquals(Status.RESERVATION_CONFLICT, r.check(C, nqn(C), NvmOpcode.FLUSH.code));
        assertEquals(Status.RESERVATION_CONFLICT, r.check(C, nqn(C), NvmOpcode.DATASET_MANAGEMENT.code));
        assertNull(r.check(C, nqn(C), NvmOpcode.RESERVATION_REPORT.code));
    }

    @Test
    void everyTypeGrantsWhatTheSpecificationSays() {
        // type -> {registrant read, registrant write, other read, other write}
        boolean[][] table = {
            null,
            {true, false, true, false},     // Write Exclusive
            {false, false, false, false},   // Exclusive Access
            {true, true, true, false},      // Write Exclusive, Registrants Only
            {true, true, false, false},     // Exclusive Access, Registrants Only
            {true, true, true, false},      // Write Exclusive, All Registrants
            {true, true, false, false},     // Exclusive Access, All Registrants
        };
        for (int type = 1; type <= 6; type++) {
            Reservations x = new Reservations(false);
            x.register(A, nqn(A), REGISTER, false, 0, 0, 1);
            x.register(B, nqn(B), REGISTER, false, 0, 0, 2);
            assertEquals(Status.SUCCESS, x.acquire(A, nqn(A), ACQUIRE, false, type, 1, 0).status());
            assertNull(x.check(A, nqn(A), WRITE), "the holder writes, type " + type);
            assertNull(x.check(A, nqn(A), READ), "the holder reads, type " + type);
            boolean[] want = table[type];
            assertEquals(want[0], x.check(B, nqn(B), READ) == null, "registrant read, type " + type);
            assertEquals(want[1], x.check(B, nqn(B), WRITE) == null, "registrant write, type " + type);
            assertEquals(want[2], x.check(C, nqn(C), READ) == null, "other read, type " + type);
            assertEquals(want[3], x.check(C, nqn(C), WRITE) == null, "other write, type " + type);
        }
    }

    @Test
    void releaseOfTheRegistrantsOnlyTypesTellsTheOtherRegistrants() {
        register(A, 1);
        register(B, 2);
        register(C, 3);
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 1, 0);
        assertEquals(Status.SUCCESS, r.release(B, nqn(B), RELEASE, false, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 2).status(),
                "not the holder: no error, no effect");
        assertEquals(WRITE_EXCLUSIVE_REGISTRANTS_ONLY, r.state().type());
        assertEquals(Status.INVALID_FIELD, r.release(A, nqn(A), RELEASE, false, WRITE_EXCLUSIVE, 1).status(), "another type");
        assertEquals(Status.INVALID_FIELD, r.release(A, nqn(A), RELEASE, true, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 1).status(), "IEKEY");
        Reservations.Outcome o = r.release(A, nqn(A), RELEASE, false, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 1);
        assertEquals(Status.SUCCESS, o.status());
        assertEquals(0, r.state().type());
        assertEquals(List.of(new Reservations.Notice(B, RESERVATION_RELEASED), new Reservations.Notice(C, RESERVATION_RELEASED)),
                o.notices());
        // Write Exclusive: its release changes nobody's access, so nobody is told
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0);
        assertEquals(List.of(), r.release(A, nqn(A), RELEASE, false, WRITE_EXCLUSIVE, 1).notices());
    }

    @Test
    void preemptingTheHolderTakesTheReservationAndUnregistersIt() {
        register(A, 1);
        register(B, 2);
        register(C, 3);
        r.acquire(A, nqn(A), ACQUIRE, false, EXCLUSIVE_ACCESS, 1, 0);
        int gen = r.state().generation();
        Reservations.Outcome o = r.acquire(B, nqn(B), PREEMPT_AND_ABORT, false, WRITE_EXCLUSIVE, 2, 1);
        assertEquals(Status.SUCCESS, o.status());
        assertEquals(Set.of(A), o.preempted(), "A's commands are aborted");
        assertEquals(B, r.state().holder());
        assertEquals(WRITE_EXCLUSIVE, r.state().type());
        assertNull(r.state().registrant(A));
        assertEquals(gen + 1, r.state().generation());
        assertTrue(o.notices().contains(new Reservations.Notice(A, REGISTRATION_PREEMPTED)));
        assertTrue(o.notices().contains(new Reservations.Notice(C, RESERVATION_RELEASED)));
        assertEquals(Status.RESERVATION_CONFLICT, r.check(A, nqn(A), WRITE), "A is fenced");
        // a key nobody holds: a conflict; a registrant's key (not the holder's): that registrant goes
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(B, nqn(B), PREEMPT, false, WRITE_EXCLUSIVE, 2, 77).status());
        assertEquals(Status.INVALID_FIELD, r.acquire(B, nqn(B), PREEMPT, false, WRITE_EXCLUSIVE, 2, 0).status(), "PRKEY 0");
        o = r.acquire(B, nqn(B), PREEMPT, false, WRITE_EXCLUSIVE, 2, 3);
        assertEquals(Set.of(C), o.preempted());
        assertEquals(B, r.state().holder(), "the reservation is unchanged");
    }

    @Test
    void theHolderPreemptsItselfToChangeTheType() {
        register(A, 1);
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0);
        Reservations.Outcome o = r.acquire(A, nqn(A), PREEMPT, false, EXCLUSIVE_ACCESS, 1, 1);
        assertEquals(Status.SUCCESS, o.status());
        assertEquals(Set.of(), o.preempted());
        assertEquals(EXCLUSIVE_ACCESS, r.state().type());
        assertEquals(A, r.state().holder());
        assertTrue(r.state().registrant(A) != null, "preempting oneself keeps one's registration");
    }

    @Test
    void allRegistrantsTypesStayWhileAnyRegistrantDoesAndZeroPreemptsEveryOther() {
        register(A, 1);
        register(B, 2);
        register(C, 3);
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE_ALL_REGISTRANTS, 1, 0);
        assertTrue(r.state().holds(B) && r.state().holds(C), "every registrant holds it");
        r.register(A, nqn(A), UNREGISTER, false, 0, 1, 0);
        assertEquals(WRITE_EXCLUSIVE_ALL_REGISTRANTS, r.state().type(), "the holder left; the registrants keep it");
        assertNull(r.check(B, nqn(B), WRITE));
        Reservations.Outcome o = r.acquire(B, nqn(B), PREEMPT, false, EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, 2, 0);
        assertEquals(Set.of(C), o.preempted());
        assertEquals(B, r.state().holder());
        assertEquals(EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, r.state().type());
        assertEquals(1, r.state().registrants().size());
    }

    @Test
    void clearUnregistersEveryoneAndTellsTheOthers() {
        register(A, 1);
        register(B, 2);
        r.acquire(A, nqn(A), ACQUIRE, false, EXCLUSIVE_ACCESS, 1, 0);
        assertEquals(Status.RESERVATION_CONFLICT, r.release(B, nqn(B), CLEAR, false, 0, 9).status(), "the key counts");
        Reservations.Outcome o = r.release(B, nqn(B), CLEAR, false, 0, 2);
        assertEquals(Status.SUCCESS, o.status());
        assertEquals(List.of(new Reservations.Notice(A, RESERVATION_PREEMPTED)), o.notices());
        assertEquals(0, r.state().type());
        assertTrue(r.state().registrants().isEmpty());
        assertNull(r.check(C, nqn(C), WRITE));
    }

    @Test
    void theHoldersUnregistrationReleases() {
        register(A, 1);
        register(B, 2);
        r.acquire(A, nqn(A), ACQUIRE, false, EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, 1, 0);
        Reservations.Outcome o = r.register(A, nqn(A), UNREGISTER, false, 0, 1, 0);
        assertEquals(0, r.state().type());
        assertEquals(List.of(new Reservations.Notice(B, RESERVATION_RELEASED)), o.notices());
    }

    @Test
    void persistThroughPowerLossIsSetAndClearedByRegisterOnlyWhereCapable() {
        assertEquals(Status.SUCCESS, r.register(A, nqn(A), REGISTER, false, CPTPL_SET, 0, 1).status());
        assertTrue(r.state().ptpl());
        assertTrue(r.register(A, nqn(A), REGISTER, false, CPTPL_CLEAR, 0, 1).changed());
        assertFalse(r.state().ptpl());
        Reservations none = new Reservations(false);
        // the Linux host sets CPTPL on every Register: where PTPL cannot be, it is ignored (as nvmet does)
        assertEquals(Status.SUCCESS, none.register(A, nqn(A), REGISTER, false, CPTPL_SET, 0, 1).status());
        assertFalse(none.state().ptpl());
        assertEquals(Status.INVALID_FIELD, none.register(A, nqn(A), REGISTER, false, 1, 0, 1).status(), "CPTPL 01b is reserved");
    }

    @Test
    void acquireWithIekeyOrAnUnknownTypeIsInvalid() {
        register(A, 1);
        assertEquals(Status.INVALID_FIELD, r.acquire(A, nqn(A), ACQUIRE, true, WRITE_EXCLUSIVE, 1, 0).status());
        assertEquals(Status.INVALID_FIELD, r.acquire(A, nqn(A), ACQUIRE, false, 7, 1, 0).status());
        assertEquals(Status.INVALID_FIELD, r.acquire(A, nqn(A), ACQUIRE, false, 0, 1, 0).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(B, nqn(B), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0).status(), "not registered");
    }

    @Test
    void oneHostNqnHoldsAtMostTwoRegistrations() {
        String m = nqn(C);
        for (int i = 0; i < Reservations.MAX_REGISTRATIONS_PER_HOST; i++) {
            assertEquals(Status.SUCCESS, r.register(new UUID(7, i), m, REGISTER, false, 0, 0, 0x70 + i).status());
        }
        int gen = r.state().generation();
        assertEquals(Status.RESERVATION_CONFLICT, r.register(new UUID(7, 9), m, REGISTER, false, 0, 0, 0x79).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.register(new UUID(7, 9), m, REPLACE, true, 0, 0, 0x79).status(),
                "Replace with IEKEY registers too");
        assertEquals(gen, r.state().generation(), "refused: nothing changed");
        assertEquals(Reservations.MAX_REGISTRATIONS_PER_HOST, r.state().registrants().size());
        assertEquals(Status.SUCCESS, register(A, 0xa1), "another host registers");
        assertEquals(Status.SUCCESS, r.register(new UUID(7, 0), m, REPLACE, false, 0, 0x70, 0x7f).status(),
                "its own registrations still change");
        assertEquals(Status.SUCCESS, r.register(new UUID(7, 0), m, UNREGISTER, false, 0, 0x7f, 0).status());
        assertEquals(Status.SUCCESS, r.register(new UUID(7, 9), m, REGISTER, false, 0, 0, 0x79).status(), "room again");
    }

    @Test
    void aRegistrationAnswersOnlyToTheHostNqnThatMadeIt() {
        register(A, 1);
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE, 1, 0);
        Reservations.State before = r.state();
        String other = nqn(B);
        assertEquals(Status.RESERVATION_CONFLICT, r.check(A, other, WRITE), "not the holder under another NQN");
        assertNull(r.check(A, nqn(A), WRITE));
        assertEquals(Status.RESERVATION_CONFLICT, r.register(A, other, REGISTER, false, 0, 0, 1).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.register(A, other, UNREGISTER, true, 0, 0, 0).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.register(A, other, REPLACE, true, 0, 0, 2).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.acquire(A, other, PREEMPT, false, EXCLUSIVE_ACCESS, 1, 1).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.release(A, other, RELEASE, false, WRITE_EXCLUSIVE, 1).status());
        assertEquals(Status.RESERVATION_CONFLICT, r.release(A, other, CLEAR, false, 0, 1).status());
        assertEquals(before, r.state(), "nothing changed");
    }

    @Test
    void theOperatorClearsRegistrationsAsIfEachHadUnregistered() {
        register(A, 1);
        register(B, 2);
        register(C, 3);
        r.acquire(A, nqn(A), ACQUIRE, false, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 1, 0);
        int gen = r.state().generation();
        assertEquals(List.of(), r.clearRegistrations("nqn.2026-11.io.nvmeof:nobody", null).removed());
        assertEquals(gen, r.state().generation(), "nothing matched: nothing changed");
        Reservations.Cleared c = r.clearRegistrations(nqn(A), null);
        assertEquals(List.of(A), c.removed().stream().map(Reservations.Registrant::hostId).toList());
        assertEquals(List.of(new Reservations.Notice(A, REGISTRATION_PREEMPTED), new Reservations.Notice(B, RESERVATION_RELEASED),
                new Reservations.Notice(C, RESERVATION_RELEASED)), c.notices());
        assertEquals(0, r.state().type(), "its holder went: released");
        assertEquals(gen + 1, r.state().generation());
        // all registrants: the reservation stays with those left
        r.acquire(B, nqn(B), ACQUIRE, false, WRITE_EXCLUSIVE_ALL_REGISTRANTS, 2, 0);
        c = r.clearRegistrations(null, B);
        assertEquals(List.of(new Reservations.Notice(B, REGISTRATION_PREEMPTED)), c.notices());
        assertEquals(WRITE_EXCLUSIVE_ALL_REGISTRANTS, r.state().type());
        assertEquals(C, r.state().holder());
        assertEquals(1, r.clearRegistrations(null, null).removed().size());
        assertEquals(0, r.state().type());
        assertTrue(r.state().registrants().isEmpty());
    }
}
