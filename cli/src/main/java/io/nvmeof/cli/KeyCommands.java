package io.nvmeof.cli;

import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Key tools with nvme-cli's names and flags: {@code gen-dhchap-key}, {@code check-dhchap-key}. */
final class KeyCommands {
    private KeyCommands() {
    }

    /** Parses a key ({@code describe} throws what is wrong with it) and says so, as nvme-cli's check commands do. */
    static int check(CommandSpec spec, Supplier<String> describe) {
        try {
            spec.commandLine().getOut().println("Key is valid (" + describe.get() + ")");
            spec.commandLine().getOut().flush();
            return 0;
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("nvmeof: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return 1;
        }
    }

    @Command(name = "gen-dhchap-key", mixinStandardHelpOptions = true,
            description = {"Generate a DH-HMAC-CHAP key (DHHC-1:XX:...:) as nvme gen-dhchap-key does: a random secret"
                    + " (or --secret), transformed with the host NQN when --hmac names a hash."})
    static final class Gen implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = {"-s", "--secret"}, paramLabel = "HEX", description = "The secret, in hex (default: random).")
        String secret;

        @Option(names = {"-l", "--key-length"}, description = "Key length in bytes: 32, 48 or 64 (default: the hash's"
                + " length, or 32).")
        Integer keyLength;

        @Option(names = {"-n", "--nqn"}, description = "Host NQN the key is bound to (default: this host's).")
        String nqn;

        @Option(names = {"-m", "--hmac"}, description = "Hash that transforms the secret: 0 none (default), 1 SHA-256,"
                + " 2 SHA-384, 3 SHA-512.")
        int hmac;

        @Override
        public Integer call() {
            DhchapHash hash = null;
            if (hmac != 0) {
                hash = DhchapHash.of(hmac);
                if (hash == null) {
                    throw new ParameterException(spec.commandLine(), "--hmac must be 0, 1, 2 or 3, not " + hmac);
                }
            }
            byte[] raw;
            if (secret != null) {
                try {
                    raw = HexFormat.of().parseHex(secret.trim());
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "--secret is not hex: " + e.getMessage());
                }
                if (keyLength != null && keyLength != raw.length) {
                    throw new ParameterException(spec.commandLine(), "--secret has " + raw.length
                            + " bytes, but --key-length says " + keyLength);
                }
            } else {
                int len = keyLength != null ? keyLength : hash != null ? hash.length : 32;
                if (len != 32 && len != 48 && len != 64) {
                    throw new ParameterException(spec.commandLine(), "--key-length must be 32, 48 or 64, not " + len);
                }
                raw = DhchapKey.randomSecret(len, new SecureRandom());
            }
            String host = nqn != null ? nqn : HostIdentity.system().hostNqn();
            DhchapKey key;
            try {
                key = DhchapKey.create(raw, hash, host);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            spec.commandLine().getOut().println(key.format());
            spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(name = "gen-tls-key", mixinStandardHelpOptions = true,
            description = {"Generate a configured TLS PSK for NVMe/TCP in the interchange format (NVMeTLSkey-1:XX:...:),"
                    + " as nvme gen-tls-key does: a random secret (or --secret). With --hostnqn and --subsysnqn, also"
                    + " print the PSK identity a host of that NQN uses for that subsystem."})
    static final class GenTls implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = {"-s", "--secret"}, paramLabel = "HEX", description = "The secret, in hex: 32 or 48 bytes"
                + " (default: random, of the hash's length).")
        String secret;

        @Option(names = {"-m", "--hmac"}, description = "Hash of the retained PSK: 1 SHA-256 (default), 2 SHA-384.")
        int hmac = 1;

        @Option(names = {"-n", "--hostnqn"}, description = "Host NQN (with --subsysnqn: print the identity).")
        String hostNqn;

        @Option(names = {"-c", "--subsysnqn"}, description = "Subsystem NQN (with --hostnqn: print the identity).")
        String subNqn;

        @Option(names = {"-I", "--identity"}, description = "Identity version: 0 (default) or 1.")
        int identity;

        @Override
        public Integer call() {
            if (hmac != 1 && hmac != 2) {
                throw new ParameterException(spec.commandLine(), "--hmac must be 1 or 2, not " + hmac);
            }
            byte[] raw;
            if (secret != null) {
                try {
                    raw = HexFormat.of().parseHex(secret.trim());
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "--secret is not hex: " + e.getMessage());
                }
            } else {
                raw = DhchapKey.randomSecret(hmac == 2 ? 48 : 32, new SecureRandom());
            }
            TlsPsk key;
            try {
                key = TlsPsk.create(raw, hmac);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            spec.commandLine().getOut().println(key.format());
            if (hostNqn != null && subNqn != null) {
                spec.commandLine().getOut().println("identity: " + key.identity(identity, hostNqn, subNqn,
                        TlsPsk.Derivation.RFC8446));
            }
            spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(name = "check-tls-key", mixinStandardHelpOptions = true,
            description = "Check a configured TLS PSK (format, CRC-32 and length), as nvme check-tls-key does.")
    static final class CheckTls implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = {"-d", "--keydata"}, description = "The key, NVMeTLSkey-1:XX:...: (visible to ps: prefer"
                + " --key-file).")
        String key;

        @Option(names = "--key-file", paramLabel = "FILE", description = "Read the key from FILE (which others must not"
                + " be able to read or change), or from standard input with -.")
        Path keyFile;

        @Override
        public Integer call() {
            return check(spec, () -> {
                TlsPsk k = TlsPsk.parse(KeyFiles.keyFrom(key, keyFile, "--keydata", "--key-file"));
                return "HMAC " + k.hashField() + ", cipher suite hash " + k.cipherHash().kernelName();
            });
        }
    }

    @Command(name = "check-dhchap-key", mixinStandardHelpOptions = true,
            description = "Check a DH-HMAC-CHAP key (format, CRC-32 and length), as nvme check-dhchap-key does.")
    static final class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = {"-k", "--key"}, description = "The key, DHHC-1:XX:...: (visible to ps: prefer --key-file).")
        String key;

        @Option(names = "--key-file", paramLabel = "FILE", description = "Read the key from FILE (which others must not"
                + " be able to read or change), or from standard input with -.")
        Path keyFile;

        @Override
        public Integer call() {
            return check(spec, () -> {
                DhchapKey k = DhchapKey.parse(KeyFiles.keyFrom(key, keyFile, "--key", "--key-file"));
                return (k.transformHash() == null ? "no transformation" : "transformed with "
                        + k.transformHash().kernelName()) + ", " + k.length() + " bytes";
            });
        }
    }
}
