package io.nvmeof.daemon.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The rule for files that hold keys, on target and host alike, as ssh checks its private keys:
 * <ul>
 * <li>others (not owner, not group) may neither read nor write the file, and nobody but its
 * owner may write it;</li>
 * <li>its owner is the user reading it or root (the package installs the target's
 * configuration as root, group-readable by the service's group: allowed);</li>
 * <li>no directory on its path lets others write (a sticky one, such as /tmp, excepted: there
 * others can add files but cannot replace this one), and each is owned by root or the user.</li>
 * </ul>
 */
public final class PrivateFiles {
    private static final int ROOT = 0;

    private PrivateFiles() {
    }

    /** Null if {@code p} may hold a key, else what is wrong with it and what to do. */
    public static String problem(Path p) {
        try {
            Path real = p.toRealPath();
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(real);
            String mode = PosixFilePermissions.toString(perms);
            if (perms.contains(PosixFilePermission.OTHERS_READ) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
                return p + " has mode " + mode + ", and others can read or write the key; chmod o-rw " + p;
            }
            if (perms.contains(PosixFilePermission.GROUP_WRITE)) {
                return p + " has mode " + mode + ", and its group can change the key; chmod g-w " + p;
            }
            int me = self();
            int owner = uid(real);
            if (me >= 0 && owner != me && owner != ROOT) {
                return p + " is owned by uid " + owner + ", neither this user (uid " + me + ") nor root, who could"
                        + " change the key; chown it to one of them";
            }
            for (Path d = real.getParent(); d != null; d = d.getParent()) {
                Set<PosixFilePermission> dp = Files.getPosixFilePermissions(d);
                boolean sticky = sticky(d);
                if (dp.contains(PosixFilePermission.OTHERS_WRITE) && !sticky) {
                    return p + " is in " + d + ", which others can write (mode " + PosixFilePermissions.toString(dp)
                            + "), so they could put another key in its place; chmod o-w " + d;
                }
                int downer = uid(d);
                if (me >= 0 && downer != me && downer != ROOT) {
                    return p + " is in " + d + ", owned by uid " + downer + ", neither this user (uid " + me
                            + ") nor root, who could put another key in its place";
                }
            }
            return null;
        } catch (UnsupportedOperationException e) {
            return null; // no POSIX modes and owners on this file system
        } catch (IOException e) {
            return "cannot read " + p + ": " + e.getMessage();
        }
    }

    private static int uid(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }

    private static boolean sticky(Path d) throws IOException {
        return ((Integer) Files.getAttribute(d, "unix:mode") & 01000) != 0;
    }

    /** This process's effective user id (the owner of /proc/self), or -1 where that cannot be told. */
    private static int self() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return -1;
        }
    }
}
