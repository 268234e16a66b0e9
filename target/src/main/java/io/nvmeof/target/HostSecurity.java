package io.nvmeof.target;

import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import java.util.List;

/**
 * What a host must prove to get in (nvmet's {@code hosts/<nqn>/dhchap_*}, SPDK's host keys):
 * its DH-HMAC-CHAP key, optionally the controller's key for bidirectional authentication, and
 * the hash functions and DH groups the target accepts from it, most preferred first; and the
 * TLS PSK (configured, in the interchange format) it opens NVMe/TCP's secure channel with.
 *
 * @param hostKey the host's key; a host with one must authenticate on every queue
 * @param controllerKey the key the controller proves itself with when the host asks, or null
 */
public record HostSecurity(String nqn, DhchapKey hostKey, DhchapKey controllerKey, List<DhchapHash> hashes,
                           List<DhGroup> dhGroups, TlsPsk tlsKey) {
    /** Hashes: the strongest first (as SPDK prefers them); they all cost next to nothing. */
    public static final List<DhchapHash> DEFAULT_HASHES = List.of(DhchapHash.SHA512, DhchapHash.SHA384, DhchapHash.SHA256);
    /**
     * DH groups: always a Diffie-Hellman exchange when the host offers one, the cheapest first.
     * Every queue of every association pays for its exchange on both sides, and the cost grows
     * with the cube of the group's size (a Linux host validating an ffdhe8192 value takes a good
     * part of a second of CPU); list stronger groups first in {@code dhchap_dhgroups} to prefer them.
     */
    public static final List<DhGroup> DEFAULT_DH_GROUPS = List.of(DhGroup.FFDHE2048, DhGroup.FFDHE3072,
            DhGroup.FFDHE4096, DhGroup.FFDHE6144, DhGroup.FFDHE8192, DhGroup.NULL);

    public HostSecurity {
        Nqn.require(nqn);
        hashes = List.copyOf(hashes.isEmpty() ? DEFAULT_HASHES : hashes);
        dhGroups = List.copyOf(dhGroups.isEmpty() ? DEFAULT_DH_GROUPS : dhGroups);
        if (controllerKey != null && hostKey == null) {
            throw new IllegalArgumentException("host " + nqn + " has a controller key but no host key");
        }
    }

    public HostSecurity(String nqn, DhchapKey hostKey, DhchapKey controllerKey, List<DhchapHash> hashes,
                        List<DhGroup> dhGroups) {
        this(nqn, hostKey, controllerKey, hashes, dhGroups, null);
    }

    public HostSecurity(String nqn, DhchapKey hostKey, DhchapKey controllerKey) {
        this(nqn, hostKey, controllerKey, List.of(), List.of(), null);
    }

    /** A host that proves itself by a TLS PSK only. */
    public static HostSecurity tls(String nqn, TlsPsk key) {
        return new HostSecurity(nqn, null, null, List.of(), List.of(), key);
    }

    /** Whether the host must authenticate. */
    public boolean requiresAuthentication() {
        return hostKey != null;
    }

    /** Whether two configurations hold the same keys and lists (a reload that changes nothing). */
    public boolean sameAs(HostSecurity o) {
        return o != null && nqn.equals(o.nqn) && (hostKey == null ? o.hostKey == null : hostKey.sameAs(o.hostKey))
                && (controllerKey == null ? o.controllerKey == null : controllerKey.sameAs(o.controllerKey))
                && hashes.equals(o.hashes) && dhGroups.equals(o.dhGroups)
                && (tlsKey == null ? o.tlsKey == null : o.tlsKey != null && tlsKey.format().equals(o.tlsKey.format()));
    }

    @Override
    public String toString() {
        return "HostSecurity{" + nqn + (hostKey != null ? ", DH-HMAC-CHAP" : "")
                + (controllerKey != null ? " bidirectional" : "") + (tlsKey != null ? ", TLS PSK" : "") + "}";
    }
}
