package io.nvmeof.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BlockSizesTest {
    /** Draws many sizes and returns the share of each, in percent. */
    static Map<Integer, Double> shares(BlockSizes b, boolean write) {
        Map<Integer, Integer> n = new HashMap<>();
        int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            n.merge(b.pick(write), 1, Integer::sum);
        }
        Map<Integer, Double> pct = new HashMap<>();
        n.forEach((k, v) -> pct.put(k, 100.0 * v / draws));
        return pct;
    }

    @Test
    void picksSizesByTheirWeights() {
        BlockSizes b = BlockSizes.parse("4k/10:64k/50:32k/40");
        Map<Integer, Double> s = shares(b, false);
        assertEquals(10, s.get(4096), 1);
        assertEquals(50, s.get(65536), 1);
        assertEquals(40, s.get(32768), 1);
        assertEquals(65536, b.max());
        assertEquals(4096, b.min());
        assertEquals(s.keySet(), shares(b, true).keySet(), "one list serves both directions");
    }

    @Test
    void sizesWithoutAWeightShareTheRest() {
        Map<Integer, Double> s = shares(BlockSizes.parse("4k/50:8k:16k"), false);
        assertEquals(50, s.get(4096), 1);
        assertEquals(25, s.get(8192), 1);
        assertEquals(25, s.get(16384), 1);
    }

    @Test
    void readsAndWritesApart() {
        BlockSizes b = BlockSizes.parse("4k/100,128k/100");
        assertEquals(Map.of(4096, 100.0), shares(b, false));
        assertEquals(Map.of(131072, 100.0), shares(b, true));
        assertEquals(List.of(4096, 131072), b.all());
    }

    @Test
    void badSplitsAreNamed() {
        for (String bad : new String[] {"4k/50:8k/60", "4k/50", "4k/x", "/50", "4k/50:8k/50,", "1,2,3", "0/100"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BlockSizes.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("--bssplit"), e.getMessage());
        }
    }
}
