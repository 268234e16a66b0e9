package io.nvmeof.target;

import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.Sizes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The table of the target's settings: every tunable, once. {@link Target.Options} holds a value
 * for each row; the daemon's JSON reader, the {@code nvmeof target} flags, {@code --show-config},
 * the man page and the README's table are made from these rows, and a test fails when a
 * tunable of the target is not among them.
 */
public final class Settings {
    private static final List<Setting<?>> ROWS = new ArrayList<>();
    private static final int CORES = Runtime.getRuntime().availableProcessors();

    // ---- threads ----
    public static final Setting<Integer> EVENT_LOOP_THREADS = integer("event_loop_threads", "threads", 0, 0, 1024, "0 (one per core)",
            false, "Event loop threads, which run the transports and the commands of non-blocking backends.");
    public static final Setting<BusyPoll> BUSY_POLL = row("busy_poll", "threads", BusyPoll.class,
            "adaptive[:MAX], off, always or MICROS", BusyPoll.ADAPTIVE, null, false,
            "How event loops wait (native epoll only): adaptive polls after each event for a window each loop sizes from"
                    + " what its sleeps cost it (up to MAX us, default 200), sleeping when events are far apart; off sleeps"
                    + " when idle; always never sleeps, as SPDK's reactors, a core per event loop; MICROS keeps polling"
                    + " that long after each event, then sleeps.",
            BusyPoll::parse, BusyPoll::text, v -> null);
    public static final Setting<String> IO_ENGINE = row("io_engine", "threads", String.class, "epoll, io_uring or nio",
            "epoll", null, false,
            "Netty's I/O transport for the event loops of this process (io_uring falls back to epoll where refused;"
                    + " epoll falls back to nio off Linux).",
            s -> s.toLowerCase(Locale.ROOT), s -> s,
            s -> List.of("epoll", "io_uring", "nio").contains(s) ? null : "must be epoll, io_uring or nio, not '" + s + "'");
    public static final Setting<String> FILE_IO = row("file_io", "threads", String.class, "auto, io_uring or threads",
            "auto", null, false,
            "How file and block namespaces read, write and flush. auto: submitted from the command's event loop and"
                    + " completed there (epoll engine), O_DIRECT ones through the loop's Linux AIO context (its completions"
                    + " reach a polling loop without an interrupt first), the others through the loop's io_uring; io_uring:"
                    + " all through the io_uring. Where the kernel or a seccomp filter refuses one, the other serves; where"
                    + " both, threads is used and logged. threads: each command handed to the I/O threads.",
            s -> s.toLowerCase(Locale.ROOT), s -> s,
            s -> List.of("auto", "io_uring", "threads").contains(s) ? null
                    : "must be auto, io_uring or threads, not '" + s + "'");
    public static final Setting<Integer> IO_THREADS = integer("io_threads", "threads", Math.max(4, 2 * CORES), 1, 1024,
            "twice the cores, at least 4", false, "Threads for blocking backend I/O: file and block namespaces with"
                    + " file_io=threads, and what io_uring does not take (Write Zeroes, deallocate, Compare, Copy).");
    public static final Setting<Integer> AUTH_THREADS = integer("auth_threads", "threads", 0, 0, 256, "0 (one per two cores)",
            false, "Threads for DH-HMAC-CHAP's Diffie-Hellman arithmetic, apart from the I/O threads.");

    // ---- what hosts see on the wire ----
    public static final Setting<Integer> MAX_QUEUE_SIZE = integer("max_queue_size", "wire", 128, 16, 1024, null, false,
            "Entries of an I/O queue at most (CAP.MQES + 1).");
    public static final Setting<Integer> MAX_IO_QUEUES = integer("max_io_queues", "wire", 64, 1, 65535, null, false,
            "I/O queues one controller may have.");
    public static final Setting<Integer> IN_CAPSULE_DATA_SIZE = row("in_capsule_data_size", "wire", Integer.class,
            "size 0..1M, a multiple of 16", 8192, null, false,
            "Write data a host may send inside the command capsule (IOCCSZ - 64 bytes).",
            s -> (int) sizeOrZero(s), v -> Integer.toString(v),
            v -> v < 0 || v > (1 << 20) || v % 16 != 0 ? "must be 0..1M and a multiple of 16, not " + v : null);
    public static final Setting<Integer> MAX_H2C_DATA = row("max_h2c_data", "wire", Integer.class,
            "size 4096..16M, a multiple of 4", 128 << 10, null, false,
            "MAXH2CDATA of NVMe/TCP: write data in one H2CData PDU at most.",
            s -> (int) Sizes.parse(s, "size"), v -> Integer.toString(v),
            v -> v < 4096 || v > (16 << 20) || v % 4 != 0 ? "must be 4096..16M and a multiple of 4, not " + v : null);
    public static final Setting<Integer> MDTS = integer("mdts", "wire", 8, 1, 10, "8 (1 MiB)", false,
            "Largest transfer of one command, as a power of two of 4 KiB pages (MDTS).");
    public static final Setting<Long> READY_TIMEOUT_MS = millis("ready_timeout_ms", "wire", 7500, 500, 127_500, false,
            "CAP.TO: how long a host waits for the controller to become ready (in 500 ms units on the wire).");

    // ---- what hosts may take ----
    public static final Setting<Long> MAX_BUFFER_MEMORY = row("max_buffer_memory", "limits", Long.class, "size",
            0L, "0 (half of the JVM's direct memory)", true,
            "Bytes of command data buffers over all hosts; commands wait for a buffer when they are in use, none fails.",
            Settings::sizeOrZero, v -> Long.toString(v), v -> v < 0 ? "must not be negative" : null);
    public static final Setting<Long> MAX_QUEUE_WRITE_DATA = row("max_queue_write_data", "limits", Long.class, "size",
            4L << 20, null, true,
            "Write data one queue may have asked its host for (R2T) and not yet received; one write alone always goes.",
            s -> Sizes.parse(s, "size"), v -> Long.toString(v), v -> v < 4096 ? "must be at least 4096" : null);
    public static final Setting<Long> MAX_COPY_IN_FLIGHT = row("max_copy_in_flight", "limits", Long.class, "size",
            4L << 20, null, true,
            "Bytes of Copy commands one controller may have running at once; its further Copies wait their turn, holding"
                    + " nothing (one Copy alone always runs). A Copy's work goes to the I/O threads 1 MiB at a time, behind"
                    + " what other hosts queued there meanwhile.",
            s -> Sizes.parse(s, "size"), v -> Long.toString(v), v -> v < 4096 ? "must be at least 4096" : null);
    public static final Setting<Integer> MAX_CONTROLLERS_PER_HOST = integer("max_controllers_per_host", "limits", 16, 1,
            0xffef, null, true, "Controllers one host NQN may hold in one subsystem at once (one per path under multipath).");
    public static final Setting<Integer> MAX_CONNECTIONS = integer("max_connections", "limits", 16384, 1, 1 << 24, null,
            true, "Connections (queues) open at once, over all ports and hosts, counted from accept; one whose Connect"
                    + " names the discovery subsystem moves to max_discovery_connections.");
    public static final Setting<Integer> MAX_DISCOVERY_CONNECTIONS = integer("max_discovery_connections", "limits", 256, 1,
            1 << 24, null, true,
            "Discovery controllers connected at once; a discovery Connect past it gets Controller Busy.");
    public static final Setting<Integer> MAX_PENDING_PER_ADDRESS = integer("max_pending_per_address", "limits", 128, 1,
            1 << 24, null, true,
            "Connections from one address not yet connected and authenticated; a new one past it closes the oldest"
                    + " of them. Established queues never count.");

    // ---- timeouts ----
    public static final Setting<Long> CONNECT_TIMEOUT_MS = millis("connect_timeout_ms", "timeouts", 10_000, 100, 3_600_000, true,
            "A connection that has not completed ICReq, Connect and, if its host must, authentication by then is closed.");
    public static final Setting<Long> DATA_TIMEOUT_MS = millis("data_timeout_ms", "timeouts", 30_000, 100, 3_600_000, true,
            "A write whose data the host owes after an R2T fails with Data Transfer Error after this long.");
    public static final Setting<Long> MIN_KEEP_ALIVE_MS = millis("min_keep_alive_ms", "timeouts", 1000, 100, 3_600_000, true,
            "The least KATO granted to a host that asks for one.");
    public static final Setting<Long> COMMAND_QUIESCE_TIME_MS = millis("command_quiesce_time_ms", "timeouts", 1000, 0, 65_535,
            true, "Reported to hosts as CQT: once a connection ends, its commands not yet started never start, and a"
            + " command already in a backend is expected to finish within this; a teardown that takes longer is logged."
            + " A host that sees the target close the connection then resubmits after CQT instead of the keep-alive"
            + " timeout. 0 reports none.");
    public static final Setting<Long> KEEP_ALIVE_GRACE_MS = millis("keep_alive_grace_ms", "timeouts", 2000, 0, 600_000, true,
            "Time past KATO before a silent host's controller is torn down.");

    // ---- RDMA ----
    public static final Setting<Boolean> RDMA_BUSY_POLL = bool("rdma_busy_poll", "rdma", false, false,
            "The verbs provider polls its completion queues instead of waiting for completion events.");
    public static final Setting<Long> RDMA_POOL_IDLE_MS = millis("rdma_pool_idle_ms", "rdma", 30_000, 1000, 3_600_000, false,
            "A slab of registered RDMA buffers unused this long is deregistered and freed.");
    public static final Setting<Integer> DISNI_CQ_SIZE = integer("disni_cq_size", "rdma", 16384, 256, 1 << 20, null, false,
            "Entries of the DiSNI provider's shared completion queue; a connection needing more gets its own.");
    public static final Setting<Integer> DISNI_INITIATOR_DEPTH = integer("disni_initiator_depth", "rdma", 1, 1, 255, null,
            false, "RDMA READs the DiSNI provider assumes a host lets it have outstanding (DiSNI cannot ask).");

    // ---- Ceph RBD ----
    public static final Setting<Long> RBD_CONNECT_TIMEOUT_MS = millis("rbd_connect_timeout_ms", "rbd", 30_000, 1000,
            600_000, false, "An RBD namespace whose cluster cannot be reached by then fails to open, naming it, and"
                    + " the target serves the rest (librados' client_mount_timeout).");
    public static final Setting<Long> RBD_OP_TIMEOUT_MS = millis("rbd_op_timeout_ms", "rbd", 20_000, 1000, 600_000,
            false, "An RBD I/O the cluster has not answered by then fails with Namespace Not Ready, which hosts retry"
                    + " (librados' rados_osd_op_timeout; below Linux's 30 s I/O timeout).");
    public static final Setting<Boolean> SHARE_RESERVATIONS = bool("share_reservations", "rbd", true, false,
            "Whether a gateway group keeps the reservations of its RBD namespaces in the cluster, so that they"
                    + " hold across gateways; off, each gateway keeps its own (as SPDK and nvmet do), and such"
                    + " subsystems offer no reservations.");
    public static final Setting<Long> GATEWAY_LEASE_MS = millis("gateway_lease_ms", "rbd", 10_000, 2000, 600_000,
            false, "How long a gateway group's lease on an ANA group lasts unrenewed: a gateway that dies, freezes or"
                    + " loses the cluster loses its groups to the others this long after its last renewal (it reports"
                    + " them inaccessible itself a tenth sooner), and is fenced before they write.");

    // ---- discovery ----
    public static final Setting<Boolean> CDC = bool("cdc", "discovery", false, false,
            "Whether this target's discovery controller is a central discovery controller (TP8010, Identify DCTYPE"
                    + " 2): it accepts Discovery Information Management registrations from targets, gateways and hosts,"
                    + " and lists what targets registered in its discovery log.");
    public static final Setting<String> CDC_REGISTRANTS = row("cdc_registrants", "discovery", String.class,
            "any|NQN[,NQN...]", "any", null, true,
            "Who may register with this central discovery controller: any host the discovery subsystem admits (with"
                    + " DH-HMAC-CHAP where the host has a key), or only the host NQNs listed.",
            String::strip, s -> s, Settings::checkRegistrants);
    public static final Setting<Integer> CDC_REGISTRATION_TTL = integer("cdc_registration_ttl", "discovery", 300, 5,
            86_400, "300 (seconds)", true,
            "Seconds a registration outlives its registrant's discovery controller when that controller was shut down"
                    + " cleanly (a one-shot registration, such as nvme-cli's dim); each update starts it again. A"
                    + " registrant whose connection was lost keeps its registrations for its keep-alive timeout only"
                    + " (at most this ttl).");
    public static final Setting<Integer> MAX_CDC_REGISTRATIONS = integer("max_cdc_registrations", "discovery", 1024, 1,
            1 << 16, null, true, "Registered entries this central discovery controller keeps in all (a registration of no"
                    + " entries, as a host's, counts as one); a registration past it is refused with Insufficient"
                    + " Discovery Resources.");
    public static final Setting<Integer> MAX_CDC_REGISTRATIONS_PER_HOST = integer("max_cdc_registrations_per_host",
            "discovery", 256, 1, 1 << 16, null, true, "Registered entries one registrant (a host NQN) may have with"
                    + " this central discovery controller (a registration of no entries counts as one); DIM data"
                    + " longer than these entries could take is refused before it is sent.");
    public static final Setting<String> CDC_ADDRESS = row("cdc_address", "discovery", String.class,
            "nvme+tcp://HOST[:PORT]", "", "none", false,
            "A central discovery controller this target registers its ports and subsystems with (the daemon; port"
                    + " 8009 by default): on start, again whenever the connection comes back, withdrawn on shutdown.",
            String::strip, s -> s, Settings::checkCdcAddress);

    /** Every row, in table order. */
    public static final List<Setting<?>> ALL = Collections.unmodifiableList(ROWS);

    private Settings() {
    }

    /** The row whose key is {@code key}, or null. */
    public static Setting<?> byKey(String key) {
        for (Setting<?> s : ALL) {
            if (s.key().equals(key)) {
                return s;
            }
        }
        return null;
    }

    private static <T> Setting<T> row(String key, String group, Class<T> type, String typeText, T def, String defText,
                                      boolean reloads, String help, Function<String, T> parser,
                                      Function<T, String> formatter, Function<T, String> checker) {
        Setting<T> s = new Setting<>(ROWS.size(), key, group, type, typeText, def, defText, reloads, help, parser,
                formatter, checker);
        ROWS.add(s);
        return s;
    }

    private static Setting<Integer> integer(String key, String group, int def, int min, int max, String defText,
                                            boolean reloads, String help) {
        return row(key, group, Integer.class, "integer " + min + ".." + max, def, defText, reloads, help, s -> {
            try {
                return Integer.parseInt(s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + s + "' is not an integer");
            }
        }, v -> Integer.toString(v), v -> v < min || v > max ? "must be " + min + ".." + max + ", not " + v : null);
    }

    private static Setting<Long> millis(String key, String group, long def, long min, long max, boolean reloads,
                                        String help) {
        return row(key, group, Long.class, "milliseconds " + min + ".." + max, def, null, reloads, help, s -> {
            try {
                return Long.parseLong(s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + s + "' is not a number of milliseconds");
            }
        }, v -> Long.toString(v), v -> v < min || v > max ? "must be " + min + ".." + max + ", not " + v : null);
    }

    private static Setting<Boolean> bool(String key, String group, boolean def, boolean reloads, String help) {
        return row(key, group, Boolean.class, "true or false", def, null, reloads, help, s -> {
            if (!s.equals("true") && !s.equals("false")) {
                throw new IllegalArgumentException("must be true or false, not '" + s + "'");
            }
            return Boolean.parseBoolean(s);
        }, v -> Boolean.toString(v), v -> null);
    }

    /** A size like 4096, 64k or 1G, or 0. */
    private static long sizeOrZero(String s) {
        return s.equals("0") ? 0 : Sizes.parse(s, "size");
    }

    private static String checkRegistrants(String s) {
        if (s.equals("any")) {
            return null;
        }
        for (String nqn : s.split(",", -1)) {
            String n = nqn.strip();
            if (!n.startsWith("nqn.") || n.length() > 223) {
                return "must be any, or host NQNs separated by commas, not '" + s + "'";
            }
        }
        return null;
    }

    /** Where a CDC is: empty, or nvme+tcp:// / nvme+rdma:// with a host and an optional port. */
    private static String checkCdcAddress(String s) {
        if (s.isEmpty() || s.matches("nvme\\+(tcp|rdma)://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?/?")) {
            return null;
        }
        return "must be nvme+tcp://HOST[:PORT] (or nvme+rdma://), not '" + s + "'";
    }
}
