package io.nvmeof.tools;

import io.nvmeof.fabric.Sizes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * fio's {@code bssplit}: block sizes by weight, {@code 4k/10:64k/50:32k/40}, optionally
 * different for reads and writes ({@code READS,WRITES}). A size without a weight shares what the
 * others leave of 100 %.
 */
public final class BlockSizes {
    private final int[][] sizes = new int[2][];
    /** Cumulative weights per direction, the last 100. */
    private final int[][] cumulative = new int[2][];
    private final String spec;

    private BlockSizes(String spec) {
        this.spec = spec;
    }

    public static BlockSizes parse(String spec) {
        String[] parts = spec.split(",", -1);
        if (parts.length > 2) {
            throw new IllegalArgumentException("--bssplit '" + spec + "': at most READS,WRITES");
        }
        BlockSizes b = new BlockSizes(spec);
        for (int d = 0; d < 2; d++) {
            String part = parts[Math.min(d, parts.length - 1)];
            if (part.isEmpty()) {
                throw new IllegalArgumentException("--bssplit '" + spec + "': an empty list");
            }
            List<Integer> sz = new ArrayList<>();
            List<Integer> pct = new ArrayList<>();
            int given = 0;
            int unweighted = 0;
            for (String e : part.split(":")) {
                String[] kv = e.split("/", -1);
                if (kv.length > 2 || kv[0].isEmpty()) {
                    throw new IllegalArgumentException("--bssplit '" + spec + "': '" + e + "' is not SIZE/PERCENT");
                }
                long size = Sizes.parse(kv[0], "--bssplit");
                if (size <= 0 || size > 1 << 30) {
                    throw new IllegalArgumentException("--bssplit '" + spec + "': block size " + kv[0] + " out of range");
                }
                int p = -1;
                if (kv.length == 2 && !kv[1].isEmpty()) {
                    try {
                        p = Integer.parseInt(kv[1]);
                    } catch (NumberFormatException x) {
                        p = -2;
                    }
                    if (p < 0 || p > 100) {
                        throw new IllegalArgumentException("--bssplit '" + spec + "': '" + kv[1] + "' is not a percentage");
                    }
                    given += p;
                } else {
                    unweighted++;
                }
                sz.add((int) size);
                pct.add(p);
            }
            if (given > 100 || (unweighted == 0 && given != 100)) {
                throw new IllegalArgumentException("--bssplit '" + spec + "': the percentages add up to " + given
                        + ", not 100");
            }
            int share = unweighted == 0 ? 0 : (100 - given) / unweighted;
            int extra = unweighted == 0 ? 0 : (100 - given) % unweighted;
            b.sizes[d] = new int[sz.size()];
            b.cumulative[d] = new int[sz.size()];
            int sum = 0;
            for (int i = 0; i < sz.size(); i++) {
                int p = pct.get(i);
                if (p < 0) {
                    p = share + (extra-- > 0 ? 1 : 0);
                }
                sum += p;
                b.sizes[d][i] = sz.get(i);
                b.cumulative[d][i] = sum;
            }
        }
        return b;
    }

    /** The size of the next I/O in that direction, by the weights. */
    int pick(boolean write) {
        int d = write ? 1 : 0;
        int r = ThreadLocalRandom.current().nextInt(100);
        int[] c = cumulative[d];
        for (int i = 0; i < c.length; i++) {
            if (r < c[i]) {
                return sizes[d][i];
            }
        }
        return sizes[d][c.length - 1];
    }

    int max() {
        int m = 0;
        for (int[] s : sizes) {
            for (int v : s) {
                m = Math.max(m, v);
            }
        }
        return m;
    }

    int min() {
        int m = Integer.MAX_VALUE;
        for (int[] s : sizes) {
            for (int v : s) {
                m = Math.min(m, v);
            }
        }
        return m;
    }

    /** Every size, for checking them against the device. */
    List<Integer> all() {
        List<Integer> l = new ArrayList<>();
        for (int[] s : sizes) {
            for (int v : s) {
                l.add(v);
            }
        }
        return l;
    }

    @Override
    public String toString() {
        return spec;
    }
}
