package io.nvmeof.daemon;

import io.nvmeof.target.backend.PinnedPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

/**
 * Where the management API may put file and block namespaces: under {@code
 * management.allowed_paths}, never a file of the state directory itself (its state, reservation
 * and grant files; a directory of its own under it, such as {@code volumes/}, may be allowed)
 * nor anything under the {@code save_config} directory, whatever the allowed paths say. A path is resolved as the kernel resolves it (links and
 * {@code ..} in the order they come, no textual shortcut), a new file by its parent; the
 * resolved path is what is checked and what is served, and it is opened from the allowed
 * directory with no link followed ({@link PinnedPath}), so a component swapped after the check
 * makes the open fail instead of leading elsewhere. The same check runs at every open of a
 * namespace the API made, at a start and a reload too.
 */
public final class NamespacePaths {
    private final List<Path> allowed;
    private final Path stateDir;
    private final Path saveDir;

    /**
     * {@code allowed}: the allowed directories; {@code stateDir} (null: none) and {@code saveDir}
     * (null: none): what is never served.
     */
    public NamespacePaths(List<Path> allowed, Path stateDir, Path saveDir) {
        this.allowed = List.copyOf(allowed);
        this.stateDir = stateDir == null ? null : real(stateDir);
        this.saveDir = saveDir == null ? null : real(saveDir);
    }

    /** A path the API may not serve; its message says so without telling whether the path exists. */
    public static final class Refused extends IOException {
        Refused(String message) {
            super(message);
        }
    }

    /**
     * The real path {@code given} names (a file that does not exist yet: its parent's real path
     * and its name), if it lies under an allowed directory and outside the ones never served.
     * Every other case gets one answer, which does not tell whether the path exists or can be
     * read.
     */
    public Path resolve(String given) throws Refused {
        Refused refused = new Refused(given + " is not a file or device under management.allowed_paths " + allowed
                + " that the target may serve (nvmeof target --allowed-path DIR, or management.allowed_paths in its"
                + " configuration, allows a directory)");
        if (!given.startsWith("/")) {
            throw new Refused(given + " is not an absolute path");
        }
        Path p;
        try {
            p = Path.of(given);
        } catch (InvalidPathException e) {
            throw new Refused(given.replace('\0', '?') + " is not a path (" + e.getReason() + ")");
        }
        if (!p.normalize().toString().equals(given)) {
            // "." and ".." are refused before the file system is asked: resolving them would tell
            // whether a directory on the way exists
            throw new Refused(given + " is not a plain absolute path (no \".\", \"..\" or \"//\"): name the file itself");
        }
        Path realPath;
        try {
            if (Files.exists(p)) {
                realPath = p.toRealPath();
            } else {
                Path name = p.getFileName();
                if (name == null || name.toString().equals("..") || name.toString().equals(".")
                        || Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    throw refused; // no name, or a link that leads nowhere
                }
                realPath = p.getParent().toRealPath().resolve(name);
            }
        } catch (IOException | SecurityException e) {
            throw refused;
        }
        if (root(realPath) == null) {
            throw refused;
        }
        if (stateDir != null && stateDir.equals(realPath.getParent()) || saveDir != null && realPath.startsWith(saveDir)) {
            throw refused;
        }
        return realPath;
    }

    /**
     * Holds the file or device at {@code given} after {@link #resolve} admits it, opened from its
     * allowed directory with no link followed; created (empty) if missing and {@code create}.
     */
    public PinnedPath pin(String given, boolean create) throws IOException {
        Path realPath = resolve(given);
        Path root = root(realPath);
        return PinnedPath.beneath(root, root.relativize(realPath), create);
    }

    /** The allowed directory (real path) {@code realPath} lies strictly under; null if none. */
    private Path root(Path realPath) {
        for (Path a : allowed) {
            Path ra = real(a);
            if (realPath.startsWith(ra) && !realPath.equals(ra)) {
                return ra;
            }
        }
        return null;
    }

    /** {@code p}'s real path; where it does not exist, its absolute normal form (which no real path of a file there matches). */
    static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize(); // absent: nothing there can match a real path that exists
        }
    }
}
