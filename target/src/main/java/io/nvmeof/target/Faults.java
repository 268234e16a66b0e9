package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Faults injected into a running target, for tests of the software on the other side: a delay
 * added to commands, the next commands of an opcode failed with a chosen status, a stall (commands
 * held unanswered until {@link #resume}), connections dropped, asynchronous events sent. Namespace
 * faults that are not about one command (write protection, a new size) are the subsystem's own
 * operations: {@link Subsystem#readOnly} and {@link Subsystem#resize}.
 *
 * <p>A rule applies to the commands its {@link Match} selects, on every transport. Rules are
 * checked as a command has passed validation and before it runs (for a write, before its data is
 * asked for), so a failed command never touches the namespace. Fused commands are left alone.
 *
 * <p>With no rule set the data path pays one read of a field per command and allocates nothing
 * ({@code AllocationTest} holds it at 0 B per command).
 */
public final class Faults {
    private static final System.Logger LOG = System.getLogger(Faults.class.getName());

    private final Target target;
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    /** Whether any rule is set: the one thing the data path reads when none is. */
    private volatile boolean armed;
    private final ConcurrentLinkedQueue<Request> held = new ConcurrentLinkedQueue<>();

    Faults(Target target) {
        this.target = target;
    }

    /** The queues a {@link Match} looks at. */
    public enum Queues { ALL, ADMIN, IO }

    /**
     * Which commands a fault applies to. Each field left at "any" matches everything: a null
     * subsystem or host, NSID 0, opcode -1. {@link #all()} includes admin and Fabrics commands
     * (Connect too); {@link #io()} and {@link #namespace} only commands on I/O queues,
     * {@link #admin()} only those on admin queues.
     */
    public record Match(String subsystem, String host, Queues queues, int nsid, int opcode) {
        public Match {
            Objects.requireNonNull(queues, "queues");
            if (opcode < -1 || opcode > 0xff) {
                throw new IllegalArgumentException("opcode must be 0..255 (or -1: any): " + opcode);
            }
        }

        public static Match all() {
            return new Match(null, null, Queues.ALL, 0, -1);
        }

        /** Commands on I/O queues. */
        public static Match io() {
            return all().queues(Queues.IO);
        }

        /** Commands on admin queues. */
        public static Match admin() {
            return all().queues(Queues.ADMIN);
        }

        /** I/O commands to namespace {@code nsid}. */
        public static Match namespace(int nsid) {
            return io().nsid(nsid);
        }

        public Match subsystem(String nqn) {
            return new Match(nqn, host, queues, nsid, opcode);
        }

        /** Commands of host {@code hostNqn}'s controllers (its connections). */
        public Match host(String hostNqn) {
            return new Match(subsystem, hostNqn, queues, nsid, opcode);
        }

        public Match queues(Queues queues) {
            return new Match(subsystem, host, queues, nsid, opcode);
        }

        /** Commands naming namespace {@code nsid}. */
        public Match nsid(int nsid) {
            return new Match(subsystem, host, queues, nsid, opcode);
        }

        /** Commands with this opcode (an NVM opcode on I/O queues, an admin opcode on admin queues). */
        public Match opcode(int opcode) {
            return new Match(subsystem, host, queues, nsid, opcode);
        }

        boolean matches(QueuePair q, SubmissionQueueEntry sqe) {
            int qid = q.qid();
            if (queues == Queues.IO && qid <= 0 || queues == Queues.ADMIN && qid != 0
                    || opcode >= 0 && sqe.opcode() != opcode || nsid != 0 && sqe.nsid() != nsid) {
                return false;
            }
            if (subsystem == null && host == null) {
                return true;
            }
            Controller c = q.controller(); // null before Connect: nobody's yet
            return c != null && (subsystem == null || subsystem.equals(c.subsystem().nqn()))
                    && (host == null || host.equals(c.hostNqn()));
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(queues == Queues.IO ? "I/O commands"
                    : queues == Queues.ADMIN ? "admin commands" : "commands");
            if (opcode >= 0) {
                b.append(" with opcode 0x").append(Integer.toHexString(opcode));
            }
            if (nsid != 0) {
                b.append(" to nsid ").append(Integer.toUnsignedString(nsid));
            }
            if (subsystem != null) {
                b.append(" of ").append(subsystem);
            }
            if (host != null) {
                b.append(" from ").append(host);
            }
            return b.toString();
        }
    }

    /** A rule in force; {@link #remove()} lifts it. */
    public abstract sealed class Rule permits Delay, Fail, Stall {
        final Match match;

        Rule(Match match) {
            this.match = Objects.requireNonNull(match, "match");
        }

        public Match match() {
            return match;
        }

        /** Lifts this rule (a stall's held commands go on). */
        public void remove() {
            removeRule(this);
        }
    }

    final class Delay extends Rule {
        final long nanos;

        Delay(Match match, long nanos) {
            super(match);
            this.nanos = nanos;
        }
    }

    final class Fail extends Rule {
        final Status status;
        final AtomicInteger left;

        Fail(Match match, int count, Status status) {
            super(match);
            this.status = status;
            this.left = new AtomicInteger(count);
        }
    }

    final class Stall extends Rule {
        Stall(Match match) {
            super(match);
        }
    }

    /** Adds {@code delay} before each command {@code match} selects runs (delays of several rules add up). */
    public Rule delay(Match match, Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative: " + delay);
        }
        return add(new Delay(match, delay.toNanos()));
    }

    /**
     * Fails the next {@code count} commands {@code match} selects with {@code status} (its DNR
     * bit as given), then lifts itself.
     */
    public Rule fail(Match match, int count, Status status) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1: " + count);
        }
        if (status.isSuccess()) {
            throw new IllegalArgumentException("a failure needs an error status");
        }
        return add(new Fail(match, count, status));
    }

    /** Stops answering the commands {@code match} selects: they are held until the rule goes ({@link #resume}). */
    public Rule stall(Match match) {
        return add(new Stall(match));
    }

    /** Lifts every stall: the held commands run now, in the order they came. */
    public void resume() {
        for (Rule r : rules) {
            if (r instanceof Stall) {
                removeRule(r);
            }
        }
    }

    /** Lifts every rule. */
    public void clear() {
        for (Rule r : rules) {
            removeRule(r);
        }
    }

    /** The rules in force. */
    public List<Rule> rules() {
        return List.copyOf(rules);
    }

    /** Commands held by stalls now. */
    public int heldCount() {
        return held.size();
    }

    private Rule add(Rule rule) {
        rules.add(rule);
        armed = true;
        LOG.log(System.Logger.Level.INFO, "fault set: {0} {1}", rule.getClass().getSimpleName().toLowerCase(), rule.match);
        return rule;
    }

    private void removeRule(Rule rule) {
        if (!rules.remove(rule)) {
            return;
        }
        armed = !rules.isEmpty();
        if (rule instanceof Stall) {
            releaseHeld();
        }
    }

    /** Sends the held commands no stall holds any more back to their queues. */
    private void releaseHeld() {
        List<Request> stillHeld = new ArrayList<>();
        Request r;
        while ((r = held.poll()) != null) {
            if (stalled(r.queue, r.sqe)) {
                stillHeld.add(r);
                continue;
            }
            Request go = r;
            try {
                go.queue.transport().eventLoop().execute(() -> go.queue.proceed(go));
            } catch (RejectedExecutionException e) {
                // the target is stopping: the connection goes with it
            }
        }
        held.addAll(stillHeld);
    }

    private boolean stalled(QueuePair q, SubmissionQueueEntry sqe) {
        for (Rule rule : rules) {
            if (rule instanceof Stall && rule.match.matches(q, sqe)) {
                return true;
            }
        }
        return false;
    }

    /** On the queue's loop, for a validated command: true when a fault took it over. */
    boolean intercept(QueuePair q, Request r) {
        if (!armed || r.sqe.fuse() != SubmissionQueueEntry.FUSE_NORMAL) {
            return false;
        }
        long delay = 0;
        for (Rule rule : rules) {
            if (!rule.match.matches(q, r.sqe)) {
                continue;
            }
            if (rule instanceof Stall) {
                held.add(r);
                if (!stalled(q, r.sqe)) { // resumed meanwhile: nothing would release it
                    releaseHeld();
                }
                return true;
            }
            if (rule instanceof Fail f) {
                int left = f.left.decrementAndGet();
                if (left == 0) {
                    removeRule(f);
                }
                if (left >= 0) {
                    q.complete(r, f.status);
                    return true;
                }
            } else if (rule instanceof Delay d) {
                delay += d.nanos;
            }
        }
        if (delay <= 0) {
            return false;
        }
        q.transport().eventLoop().schedule(() -> q.proceed(r), delay, TimeUnit.NANOSECONDS);
        return true;
    }

    /**
     * Ends the connections of the controllers {@code match} selects (by subsystem and host; the
     * rest of it is about commands and ignored), discovery controllers included, as a network that
     * fails would: the hosts see their queues close. Returns how many controllers ended.
     */
    public int dropConnections(Match match) {
        List<Controller> ended = controllers(match, true);
        for (Controller c : ended) {
            LOG.log(System.Logger.Level.INFO, "fault: dropping the connections of {0}", c);
            c.destroy();
        }
        return ended.size();
    }

    /** The controllers of the subsystem and host {@code match} names (discovery ones too if asked). */
    private List<Controller> controllers(Match match, boolean discovery) {
        List<Subsystem> all = new ArrayList<>(target.subsystems());
        if (discovery) {
            all.add(target.discovery());
        }
        List<Controller> out = new ArrayList<>();
        for (Subsystem s : all) {
            if (match.subsystem() == null || match.subsystem().equals(s.nqn())) {
                for (Controller c : s.controllers()) {
                    if (match.host() == null || match.host().equals(c.hostNqn())) {
                        out.add(c);
                    }
                }
            }
        }
        return out;
    }

    /**
     * Sends an asynchronous event (Base 2.0, Figure 146) to the controllers {@code match} selects:
     * {@code type} (0 error, 1 SMART / health, 2 notice, 6 I/O command set, 7 vendor),
     * {@code info} and the log page the host should read, whatever the host enabled. A host with
     * no request outstanding gets it with its next one. Returns how many controllers were sent it.
     */
    public int asyncEvent(Match match, int type, int info, int logPage) {
        if (type < 0 || type > 7 || info < 0 || info > 0xff || logPage < 0 || logPage > 0xff) {
            throw new IllegalArgumentException("event type is 0..7, information and log page 0..255");
        }
        int dw0 = type | info << 8 | logPage << 16;
        List<Controller> to = controllers(match, false);
        to.forEach(c -> c.event(dw0));
        return to.size();
    }
}
