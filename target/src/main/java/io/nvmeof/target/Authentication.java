package io.nvmeof.target;

import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.auth.AuthMessage.AuthException;
import io.nvmeof.protocol.auth.AuthMessage;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.Dhchap;
import io.nvmeof.protocol.auth.DhchapHash;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * DH-HMAC-CHAP on one queue, the controller's side (NVMe Base 2.0, 8.13.5): the messages a host
 * sends by Authentication Send and fetches by Authentication Receive, in the one order the
 * protocol allows (Negotiate, Challenge, Reply, Success1 and, when the host also authenticates
 * the controller, Success2). Like SPDK's target, a message out of order, a bad payload or a
 * wrong response completes its command successfully and turns the next Authentication Receive
 * into AUTH_Failure1 with the reason, after which the queue's connection ends. Until the queue
 * is authenticated, it takes nothing but these two commands (Authentication Required), and the
 * connect deadline that began at the connection's accept still runs. One step at a time: a
 * command that comes while the previous step's Diffie-Hellman arithmetic is still running gets
 * Command Sequence Error and changes nothing. That arithmetic runs on the target's few
 * authentication threads ({@link Target#authExecutor}), never on an event loop nor with storage
 * I/O, one job per queue at most, dropped if the connection closes before it ran. Each step
 * has the keep-alive timeout (or 120 s) to come; a host that stalls loses the queue, or, while
 * re-authenticating an authenticated queue, just the new transaction. Confined to the queue's
 * event loop.
 */
final class Authentication {
    private static final System.Logger LOG = System.getLogger(Authentication.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final long DEFAULT_STEP_MILLIS = 120_000;
    /** How long a refused host has to read its AUTH_Failure1 before the connection ends. */
    private static final long FAILURE_GRACE_MILLIS = 500;
    /**
     * The largest Authentication Send taken, checked with the command's SGL before any R2T or
     * buffer: a DH-HMAC-CHAP_Reply with an ffdhe8192 value and SHA-512 responses is some 1.2 KiB.
     */
    static final int MAX_MESSAGE = 16 * 1024;

    private enum Step { NEGOTIATE, CHALLENGE, REPLY, SUCCESS1, SUCCESS2, FAILURE1, DONE }

    private final QueuePair queue;
    private final Controller controller;
    private Step step = Step.NEGOTIATE;
    private boolean authenticated;
    private int tid;
    private DhchapHash hash;
    private DhGroup group;
    private HostSecurity host;
    private int s1;
    private byte[] c1;
    private DhGroup.KeyPair keys;
    /** The controller's response to the host's challenge, computed with the reply; null if not asked. */
    private byte[] controllerResponse;
    private int failure;
    private ScheduledFuture<?> timer;
    /** The Diffie-Hellman job of the step in progress, or null: while set, no other step runs. */
    private Future<?> job;

    Authentication(QueuePair queue, Controller controller) {
        this.queue = queue;
        this.controller = controller;
    }

    /** Whether the queue may carry commands other than authentication. */
    boolean authenticated() {
        return authenticated;
    }

    /** Authentication Send: a message from the host. */
    static void send(Request r, Controller c) {
        QueuePair q = r.queue;
        SubmissionQueueEntry sqe = r.sqe;
        if (!checkCommand(sqe) || r.direction != Request.XFER_H2C || r.length == 0 || sqe.authLength() != r.length) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        Authentication a = inStep(r, c);
        if (a == null) {
            return;
        }
        ByteBuffer msg = ByteBuffer.allocate(r.length).order(ByteOrder.LITTLE_ENDIAN);
        r.data.getBytes(r.dataOffset, msg);
        msg.flip();
        a.received(r, msg);
    }

    /** Authentication Receive: the host fetches the controller's next message. */
    static void receive(Request r, Controller c) {
        QueuePair q = r.queue;
        SubmissionQueueEntry sqe = r.sqe;
        if (!checkCommand(sqe) || r.direction != Request.XFER_C2H || r.length == 0 || sqe.authLength() != r.length) {
            q.complete(r, Status.INVALID_FIELD);
            return;
        }
        Authentication a = inStep(r, c);
        if (a != null) {
            a.fetch(r);
        }
    }

    /**
     * The queue's authentication, ready for {@code r}'s step; null (and {@code r} completed with
     * Command Sequence Error) while the previous step is still being computed.
     */
    private static Authentication inStep(Request r, Controller c) {
        Authentication a = r.queue.authentication(c);
        if (a.job != null) {
            r.queue.complete(r, Status.COMMAND_SEQUENCE_ERROR);
            return null;
        }
        return a;
    }

    private static boolean checkCommand(SubmissionQueueEntry sqe) {
        return sqe.authSecp() == AuthMessage.SECP && sqe.authSpsp0() == AuthMessage.SPSP0
                && sqe.authSpsp1() == AuthMessage.SPSP1;
    }

    private void received(Request r, ByteBuffer msg) {
        int kind = AuthMessage.kind(msg);
        int length = msg.remaining();
        try {
            if (kind == AuthMessage.kind(AuthMessage.TYPE_COMMON, AuthMessage.ID_NEGOTIATE)) {
                negotiate(AuthMessage.Negotiate.decode(msg, length));
            } else if (kind == AuthMessage.kind(AuthMessage.TYPE_DHCHAP, AuthMessage.ID_REPLY)) {
                expect(Step.REPLY, "DH-HMAC-CHAP_Reply");
                AuthMessage.Reply reply = AuthMessage.Reply.decode(msg, length, hash.length);
                checkTid(reply.tid());
                if (reply.dhValue().length != group.valueLength()) {
                    throw new AuthException(AuthMessage.INCORRECT_PAYLOAD, "DHVLEN " + reply.dhValue().length
                            + " for DH group " + group.kernelName);
                }
                verify(r, reply);
                return; // completes once the arithmetic is done
            } else if (kind == AuthMessage.kind(AuthMessage.TYPE_DHCHAP, AuthMessage.ID_SUCCESS2)) {
                expect(Step.SUCCESS2, "DH-HMAC-CHAP_Success2");
                checkTid(AuthMessage.Success2.decode(msg, length).tid());
                succeeded(true);
            } else if (kind == AuthMessage.kind(AuthMessage.TYPE_COMMON, AuthMessage.ID_FAILURE2)) {
                AuthMessage.Failure f = AuthMessage.Failure.decode(msg, length);
                if (step != Step.REPLY && step != Step.SUCCESS2) {
                    throw new AuthException(AuthMessage.INCORRECT_MESSAGE, "AUTH_Failure2 while expecting " + step);
                }
                checkTid(f.tid());
                LOG.log(System.Logger.Level.WARNING, "{0}: host {1} ended authentication on queue {2} with AUTH_Failure2: {3}",
                        controller.subsystem().nqn(), controller.hostNqn(), queue.qid(), AuthMessage.explain(f.explanation()));
                step = Step.DONE;
                authenticated = false;
                queue.complete(r, Status.SUCCESS);
                endConnection();
                return;
            } else {
                throw new AuthException(AuthMessage.INCORRECT_MESSAGE, String.format(
                        "unexpected message type %02x/%02x", kind >> 8 & 0xff, kind & 0xff));
            }
        } catch (AuthException e) {
            fail(e.reason, e.getMessage());
        }
        queue.complete(r, Status.SUCCESS);
    }

    private void expect(Step want, String what) throws AuthException {
        if (step != want) {
            throw new AuthException(AuthMessage.INCORRECT_MESSAGE, what + " while expecting " + expected());
        }
    }

    private String expected() {
        return switch (step) {
            case NEGOTIATE, DONE -> "AUTH_Negotiate";
            case CHALLENGE -> "Authentication Receive of the challenge";
            case REPLY -> "DH-HMAC-CHAP_Reply";
            case SUCCESS1 -> "Authentication Receive of DH-HMAC-CHAP_Success1";
            case SUCCESS2 -> "DH-HMAC-CHAP_Success2";
            case FAILURE1 -> "Authentication Receive of AUTH_Failure1";
        };
    }

    private void checkTid(int got) throws AuthException {
        if (got != tid) {
            throw new AuthException(AuthMessage.INCORRECT_PAYLOAD, "transaction " + got + ", not " + tid);
        }
    }

    private void negotiate(AuthMessage.Negotiate n) throws AuthException {
        if (step != Step.NEGOTIATE && step != Step.DONE) {
            throw new AuthException(AuthMessage.INCORRECT_MESSAGE, "AUTH_Negotiate while expecting " + expected());
        }
        tid = n.tid();
        if (n.scc() != 0) {
            throw new AuthException(AuthMessage.CONCAT_MISMATCH, "secure channel concatenation (SC_C " + n.scc()
                    + ") is not offered");
        }
        host = controller.target().hostSecurity(controller.hostNqn());
        if (host == null || !host.requiresAuthentication()) {
            throw new AuthException(AuthMessage.FAILED, "no DH-HMAC-CHAP key is configured for the host");
        }
        hash = null;
        for (DhchapHash h : host.hashes()) {
            if (contains(n.hashes(), h.id)) {
                hash = h;
                break;
            }
        }
        if (hash == null) {
            throw new AuthException(AuthMessage.HASH_UNUSABLE, "no hash function in common (host offers "
                    + Arrays.toString(n.hashes()) + ")");
        }
        group = null;
        for (DhGroup g : host.dhGroups()) {
            if (contains(n.dhGroups(), g.id)) {
                group = g;
                break;
            }
        }
        if (group == null) {
            throw new AuthException(AuthMessage.DHGROUP_UNUSABLE, "no DH group in common (host offers "
                    + Arrays.toString(n.dhGroups()) + ")");
        }
        step = Step.CHALLENGE;
        armTimer();
    }

    private static boolean contains(int[] ids, int id) {
        for (int i : ids) {
            if (i == id) {
                return true;
            }
        }
        return false;
    }

    private void fetch(Request r) {
        switch (step) {
            case CHALLENGE -> challenge(r);
            case SUCCESS1 -> {
                AuthMessage.Success1 m = new AuthMessage.Success1(tid, hash.length, controllerResponse);
                if (controllerResponse != null) {
                    step = Step.SUCCESS2;
                    armTimer();
                } else {
                    succeeded(false);
                }
                AdminCommands.reply(r, m.toBuffer(), 0);
            }
            case FAILURE1 -> sendFailure(r, failure);
            default -> {
                fail(AuthMessage.INCORRECT_MESSAGE, "Authentication Receive while expecting " + expected());
                sendFailure(r, failure);
            }
        }
    }

    private void challenge(Request r) {
        s1 = Dhchap.sequenceNumber(RANDOM);
        c1 = Dhchap.challenge(hash.length, RANDOM);
        if (group == DhGroup.NULL) {
            keys = null;
            sendChallenge(r, new byte[0]);
            return;
        }
        DhGroup g = group;
        DhGroup.KeyPair[] made = new DhGroup.KeyPair[1];
        offload(r, () -> made[0] = g.generate(RANDOM), () -> {
            keys = made[0];
            sendChallenge(r, keys.publicValue());
        });
    }

    private void sendChallenge(Request r, byte[] publicValue) {
        step = Step.REPLY;
        armTimer();
        AdminCommands.reply(r, new AuthMessage.Challenge(tid, hash.id, group.id, s1, c1, publicValue).toBuffer(), 0);
    }

    /** Checks the host's response (and computes the controller's) off the event loop. */
    private void verify(Request r, AuthMessage.Reply reply) {
        HostSecurity h = host;
        DhchapHash hf = hash;
        DhGroup.KeyPair kp = keys;
        String hostNqn = controller.hostNqn();
        String subNqn = controller.subsystem().nqn();
        int t = tid;
        int seq = s1;
        byte[] challenge = c1;
        String[] problem = new String[1];
        byte[][] ctrl = new byte[1][];
        Runnable work = () -> {
            byte[] session = null;
            try {
                if (kp != null) {
                    session = kp.sharedSecret(reply.dhValue());
                }
                byte[] key = h.hostKey().transformed(hostNqn);
                byte[] expected = Dhchap.hostResponse(hf, key, challenge, seq, t, 0, hostNqn, subNqn, session);
                Dhchap.wipe(key);
                if (!MessageDigest.isEqual(expected, reply.response())) {
                    problem[0] = "the host's response does not match its key (wrong dhchap_key?)";
                    return;
                }
                if (reply.cvalid()) {
                    if (h.controllerKey() == null) {
                        problem[0] = "the host asks the controller to authenticate, but no dhchap_ctrl_key is configured";
                        return;
                    }
                    byte[] ck = h.controllerKey().transformed(subNqn);
                    ctrl[0] = Dhchap.controllerResponse(hf, ck, reply.c2(), reply.seqnum(), t, 0, subNqn, hostNqn, session);
                    Dhchap.wipe(ck);
                }
            } catch (IllegalArgumentException e) {
                problem[0] = e.getMessage();
            } finally {
                Dhchap.wipe(session);
            }
        };
        Runnable then = () -> {
            keys = null;
            if (problem[0] == null && !authenticated && queue.qid() == 0 && !controller.subsystem().admit(controller)) {
                problem[0] = "the host holds the most controllers one host may already";
            }
            if (problem[0] != null) {
                fail(AuthMessage.FAILED, problem[0]);
            } else {
                controllerResponse = ctrl[0];
                step = Step.SUCCESS1;
                armTimer();
            }
            queue.complete(r, Status.SUCCESS);
        };
        if (kp == null) {
            work.run(); // HMACs only: microseconds
            then.run();
        } else {
            offload(r, work, then);
        }
    }

    private void offload(Request r, Runnable work, Runnable then) {
        r.offloaded = true;
        try {
            job = controller.target().threads().auth().submit(() -> {
                work.run();
                try {
                    queue.transport().eventLoop().execute(() -> {
                        r.offloaded = false;
                        job = null;
                        if (!queue.dropIfClosed(r)) {
                            then.run();
                        }
                    });
                } catch (RejectedExecutionException e) {
                    // the event loops are gone, and the connection with them
                }
            });
        } catch (RejectedExecutionException e) {
            // every authentication thread is busy and the backlog full: the host may try again
            r.offloaded = false;
            LOG.log(System.Logger.Level.WARNING, "{0}: no authentication thread free for host {1} ({2})",
                    controller.subsystem().nqn(), controller.hostNqn(), queue.transport().peer());
            queue.complete(r, Status.COMMAND_INTERRUPTED);
        }
    }

    private void succeeded(boolean bidirectional) {
        step = Step.DONE;
        cancelTimer();
        boolean first = !authenticated;
        authenticated = true;
        queue.admit();
        c1 = null;
        controllerResponse = null;
        System.Logger.Level level = queue.qid() == 0 ? System.Logger.Level.INFO : System.Logger.Level.DEBUG;
        LOG.log(level, "{0}: host {1} {2} on queue {3} with {4}, DH group {5}{6}", controller.subsystem().nqn(),
                controller.hostNqn(), first ? "authenticated" : "re-authenticated", queue.qid(), hash.kernelName(),
                group.kernelName, bidirectional ? "; controller authenticated to the host" : "");
    }

    /** The transaction failed: the next Authentication Receive returns AUTH_Failure1. */
    private void fail(int reason, String why) {
        LOG.log(System.Logger.Level.WARNING, "{0}: host {1} ({2}) failed authentication on queue {3}: {4} ({5})",
                controller.subsystem().nqn(), controller.hostNqn(), queue.transport().peer(), queue.qid(), why,
                AuthMessage.explain(reason));
        step = Step.FAILURE1;
        failure = reason;
        authenticated = false;
        keys = null;
        armTimer();
    }

    private void sendFailure(Request r, int reason) {
        step = Step.DONE;
        cancelTimer();
        AdminCommands.reply(r, new AuthMessage.Failure(tid, true, reason).toBuffer(), 0);
        endConnection();
    }

    /** Ends the queue's connection once the host had a moment to read the last message. */
    private void endConnection() {
        queue.transport().eventLoop().schedule(queue::disconnect, FAILURE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void armTimer() {
        cancelTimer();
        long kato = controller.katoMillis();
        long ms = kato > 0 ? kato : DEFAULT_STEP_MILLIS;
        timer = queue.transport().eventLoop().schedule(this::expired, ms, TimeUnit.MILLISECONDS);
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void expired() {
        timer = null;
        if (queue.isClosed() || step == Step.DONE) {
            return;
        }
        if (authenticated) {
            LOG.log(System.Logger.Level.WARNING, "{0}: host {1} did not finish re-authentication on queue {2} in time;"
                    + " the queue stays authenticated", controller.subsystem().nqn(), controller.hostNqn(), queue.qid());
            step = Step.DONE;
            return;
        }
        LOG.log(System.Logger.Level.WARNING, "{0}: host {1} ({2}) did not finish authentication on queue {3} in time;"
                + " disconnected", controller.subsystem().nqn(), controller.hostNqn(), queue.transport().peer(), queue.qid());
        queue.disconnect();
    }

    /** The queue closed: a Diffie-Hellman job not yet started is dropped. */
    void closed() {
        cancelTimer();
        keys = null;
        Future<?> j = job;
        if (j != null) {
            j.cancel(false);
            controller.target().threads().auth().remove((Runnable) j);
        }
        if (!authenticated && step != Step.DONE) {
            LOG.log(System.Logger.Level.INFO, "{0}: host {1} ({2}) closed queue {3} without authenticating",
                    controller.subsystem().nqn(), controller.hostNqn(), queue.transport().peer(), queue.qid());
        }
    }
}
