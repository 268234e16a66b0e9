package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The host NQN and host ID, as nvme-cli keeps them in /etc/nvme/hostnqn and /etc/nvme/hostid.
 *
 * <p>The two need not share a UUID: Debian's nvme-cli package writes a UUID host NQN and a
 * different random host ID, and the kernel only asks that one host NQN always come with the
 * same host ID. So both files are taken as they are when both are valid. With only one of them
 * the other is derived from it (the NQN's own UUID, or a name-based one; the UUID form of the
 * NQN from a host ID); with neither, a UUID NQN derived from /etc/machine-id (stable on this
 * machine), or one random UUID per process where there is no machine ID. Malformed files are
 * ignored as if absent.
 */
public record HostIdentity(String hostNqn, UUID hostId) {
    private static final Path ROOT = Path.of("/");

    public HostIdentity {
        Nqn.require(hostNqn);
        if (hostId == null) {
            throw new IllegalArgumentException("host ID is missing for " + hostNqn);
        }
    }

    /** The machine's identity, from /etc/nvme and /etc/machine-id. */
    public static HostIdentity system() {
        return read(ROOT);
    }

    /**
     * The identity found under {@code root} ({@code root/etc/nvme/hostnqn},
     * {@code root/etc/nvme/hostid}, {@code root/etc/machine-id}): the seam that lets tests and
     * containers point elsewhere than the machine's own files.
     */
    public static HostIdentity read(Path root) {
        String nqn = readLine(root.resolve("etc/nvme/hostnqn"));
        if (nqn != null && Nqn.problem(nqn) != null) {
            nqn = null;
        }
        UUID id = parseUuid(readLine(root.resolve("etc/nvme/hostid")));
        if (nqn != null || id != null) {
            return of(nqn != null ? nqn : Nqn.fromUuid(id), id);
        }
        String machine = readLine(root.resolve("etc/machine-id"));
        UUID uuid = machine != null
                ? UUID.nameUUIDFromBytes(("nvmeof-java:" + machine).getBytes(StandardCharsets.UTF_8))
                : ProcessUuid.VALUE;
        return new HostIdentity(Nqn.fromUuid(uuid), uuid);
    }

    /**
     * {@code hostNqn} with {@code hostId}, or when that is null the host ID that belongs to the
     * NQN: its own UUID for the UUID form, else one derived from its name (stable, so the same
     * NQN always comes with the same ID).
     */
    public static HostIdentity of(String hostNqn, UUID hostId) {
        Nqn.require(hostNqn);
        if (hostId != null) {
            return new HostIdentity(hostNqn, hostId);
        }
        UUID own = hostNqn.startsWith(Nqn.UUID_PREFIX) ? parseUuid(hostNqn.substring(Nqn.UUID_PREFIX.length())) : null;
        return new HostIdentity(hostNqn, own != null ? own
                : UUID.nameUUIDFromBytes(hostNqn.getBytes(StandardCharsets.UTF_8)));
    }

    private static UUID parseUuid(String s) {
        if (s == null || s.length() != 36) {
            return null;
        }
        try {
            return UUID.fromString(s);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static String readLine(Path p) {
        try {
            if (!Files.isReadable(p)) {
                return null;
            }
            String s = Files.readString(p, StandardCharsets.US_ASCII).trim();
            return s.isEmpty() ? null : s;
        } catch (IOException e) {
            return null;
        }
    }

    /** One random UUID for this process, for machines with neither /etc/nvme nor a machine ID. */
    private static final class ProcessUuid {
        static final UUID VALUE = UUID.randomUUID();
    }
}
