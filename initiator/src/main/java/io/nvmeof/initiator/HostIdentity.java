package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The host NQN and host ID, kept paired as nvme-cli keeps them: from /etc/nvme/hostnqn and
 * /etc/nvme/hostid when present, else a UUID NQN derived from /etc/machine-id (stable on
 * this machine) with the same UUID as host ID.
 */
public record HostIdentity(String hostNqn, UUID hostId) {
    public HostIdentity {
        Nqn.require(hostNqn);
    }

    /** The machine's identity. */
    public static HostIdentity system() {
        String nqn = readLine(Path.of("/etc/nvme/hostnqn"));
        String id = readLine(Path.of("/etc/nvme/hostid"));
        if (nqn != null && Nqn.problem(nqn) == null) {
            UUID hostId = null;
            if (id != null) {
                try {
                    hostId = UUID.fromString(id);
                } catch (IllegalArgumentException ignored) {
                    hostId = null;
                }
            }
            if (hostId == null && nqn.contains(":uuid:")) {
                hostId = UUID.fromString(nqn.substring(nqn.lastIndexOf(':') + 1));
            }
            if (hostId == null) {
                hostId = UUID.nameUUIDFromBytes(nqn.getBytes(StandardCharsets.UTF_8));
            }
            return new HostIdentity(nqn, hostId);
        }
        String machine = readLine(Path.of("/etc/machine-id"));
        UUID uuid = machine != null
                ? UUID.nameUUIDFromBytes(("nvmeof-java:" + machine).getBytes(StandardCharsets.UTF_8))
                : UUID.randomUUID();
        return new HostIdentity(Nqn.fromUuid(uuid), uuid);
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
}
