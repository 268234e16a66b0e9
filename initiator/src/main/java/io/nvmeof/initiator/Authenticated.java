package io.nvmeof.initiator;

/**
 * How the host and the controller authenticated each other on the admin queue (DH-HMAC-CHAP):
 * the hash and DH group used, as the kernel names them ({@code hmac(sha256)}, {@code ffdhe2048}
 * or {@code null}), and whether the controller proved itself too.
 */
public record Authenticated(String hash, String dhGroup, boolean controllerAuthenticated) {
}
