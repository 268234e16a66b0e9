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
     * DH groups unless the host's {@code dhchap_dhgroups} lists others: ffdhe2048 and ffdhe3072,
     * always a Diffie-Hellman exchange when the host offers one, the cheapest first, and NULL (no
     * exchange, the challenge and response alone) for a host that offers nothing else. The larger
     * groups are left out because the host picks among what is offered and the target pays for
     * its pick before the host has proved anything: the cost grows with the cube of the group's
     * size, one ffdhe8192 exchange costing the target some 20 times an ffdhe2048 one (17 ms
     * against 0.8 ms in Java: README, Security, and DhGroupBench). NULL stays: it costs nothing, and its response is still an HMAC under the host's
     * key; what it lacks is the exchange's session key, which only secure channel concatenation
     * would use, and that is not offered.
     */
    public static final List<DhGroup> DEFAULT_DH_GROUPS = List.of(DhGroup.FFDHE2048, DhGroup.FFDHE3072, DhGroup.NULL);

    public HostSecurity {
        Nqn.requireUsable(nqn);
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
        return o != null && nqn.equals(o.nqn) && sameKeys(this, o) && hashes.equals(o.hashes) && dhGroups.equals(o.dhGroups);
    }

    /**
     * Whether {@code a} and {@code b} (either null: no entry, so no keys) hold the same keys: the
     * DH-HMAC-CHAP host and controller keys and the TLS PSK. A change in any of them ends the
     * host's controllers on a reload.
     */
    public static boolean sameKeys(HostSecurity a, HostSecurity b) {
        DhchapKey ah = a == null ? null : a.hostKey;
        DhchapKey bh = b == null ? null : b.hostKey;
        DhchapKey ac = a == null ? null : a.controllerKey;
        DhchapKey bc = b == null ? null : b.controllerKey;
        TlsPsk at = a == null ? null : a.tlsKey;
        TlsPsk bt = b == null ? null : b.tlsKey;
        return (ah == null ? bh == null : ah.sameAs(bh)) && (ac == null ? bc == null : ac.sameAs(bc))
                && (at == null ? bt == null : bt != null && at.format().equals(bt.format()));
    }

    @Override
    public String toString() {
        return "HostSecurity{" + nqn + (hostKey != null ? ", DH-HMAC-CHAP" : "")
                + (controllerKey != null ? " bidirectional" : "") + (tlsKey != null ? ", TLS PSK" : "") + "}";
    }
}
