package io.nvmeof.target;

import io.nvmeof.fabric.rdma.RdmaTuning;
import java.util.ArrayList;
import java.util.List;

/**
 * The target's settings in effect ({@link Target.Options}) and what its parts read of them: one
 * volatile read per question, so a reload ({@link #update}) reaches the next connection or command.
 */
final class Tuning {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());

    /** Replaced whole by {@link #update} (a reload), never changed in place. */
    private volatile Target.Options options;

    Tuning(Target.Options options) {
        this.options = options;
    }

    Target.Options options() {
        return options;
    }

    /**
     * Takes {@code next}, except the settings that do not reload ({@link Setting#reloads()}), which
     * keep their values; those are returned, and logged.
     */
    synchronized List<Setting<?>> update(Target.Options next) {
        Target.Options now = options;
        Target.Options o = next.withIoExecutor(now.ioExecutor());
        List<Setting<?>> kept = new ArrayList<>();
        for (Setting<?> s : now.differences(next)) {
            if (!s.reloads()) {
                kept.add(s);
                o = o.withValueOf(s, now);
            }
        }
        options = o;
        for (Setting<?> s : kept) {
            LOG.log(System.Logger.Level.WARNING, "{0} changes only at a restart: keeping {1}", s.key(),
                    s.formatObject(o.get(s)));
        }
        return kept;
    }

    <T> T get(Setting<T> setting) {
        return options.get(setting);
    }

    /** File and block namespaces' reads, writes and flushes go through their loop's kernel queues ({@link Settings#FILE_IO}). */
    boolean ringFileIo() {
        return !"threads".equals(options.get(Settings.FILE_IO));
    }

    /** O_DIRECT files and block devices go through their loop's Linux AIO context ({@link Settings#FILE_IO} auto). */
    boolean aioFileIo() {
        return "auto".equals(options.get(Settings.FILE_IO));
    }

    int maxQueueSize() {
        return options.get(Settings.MAX_QUEUE_SIZE);
    }

    int maxIoQueues() {
        return options.get(Settings.MAX_IO_QUEUES);
    }

    int inCapsuleDataSize() {
        return options.get(Settings.IN_CAPSULE_DATA_SIZE);
    }

    int maxH2cData() {
        return options.get(Settings.MAX_H2C_DATA);
    }

    int mdts() {
        return options.get(Settings.MDTS);
    }

    /** Largest transfer of one command: 2^MDTS pages of 4 KiB. */
    int maxTransferSize() {
        return 4096 << options.get(Settings.MDTS);
    }

    int readyTimeoutHalfSeconds() {
        return (int) (options.get(Settings.READY_TIMEOUT_MS) / 500);
    }

    long keepAliveGraceMillis() {
        return options.get(Settings.KEEP_ALIVE_GRACE_MS);
    }

    /** How the target's RDMA providers are tuned. */
    RdmaTuning rdmaTuning() {
        Target.Options o = options;
        return new RdmaTuning(o.get(Settings.RDMA_BUSY_POLL), o.get(Settings.DISNI_CQ_SIZE),
                o.get(Settings.DISNI_INITIATOR_DEPTH));
    }

    /** How long a registered RDMA slab stays unused before it is given back. */
    long rdmaPoolIdleMillis() {
        return options.get(Settings.RDMA_POOL_IDLE_MS);
    }

    long maxQueueWriteData() {
        return options.get(Settings.MAX_QUEUE_WRITE_DATA);
    }

    long maxCopyInFlight() {
        return options.get(Settings.MAX_COPY_IN_FLIGHT);
    }

    long dataTimeoutMillis() {
        return options.get(Settings.DATA_TIMEOUT_MS);
    }

    long connectTimeoutMillis() {
        return options.get(Settings.CONNECT_TIMEOUT_MS);
    }

    /** CQT: the most milliseconds an ended connection's commands take to leave the backend. */
    long commandQuiesceTimeMillis() {
        return options.get(Settings.COMMAND_QUIESCE_TIME_MS);
    }

    int maxControllersPerHost() {
        return options.get(Settings.MAX_CONTROLLERS_PER_HOST);
    }

    /**
     * The KATO granted for {@code askedMillis}: a discovery controller asked for none gets 120 s
     * (so a host that vanishes does not keep it for ever), any other request at least {@link
     * Settings#MIN_KEEP_ALIVE_MS}; 0 (no keep-alive) stays 0 on an I/O controller.
     */
    long grantedKato(long askedMillis, boolean discovery) {
        if (askedMillis == 0) {
            return discovery ? Target.DISCOVERY_KATO_MILLIS : 0;
        }
        return Math.max(askedMillis, options.get(Settings.MIN_KEEP_ALIVE_MS));
    }
}
