package cardarena;

import java.nio.charset.StandardCharsets;

/** A seeded generator (splitmix64): the same in every starter kit, so they replay alike. */
public final class Rng {
    private long state;

    public Rng(long state) {
        this.state = state;
    }

    /** Seeded from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start. */
    public static Rng forGame(long seed, String gameId, long seat) {
        long hash = 0xcbf29ce484222325L;
        String text = Long.toUnsignedString(seed) + ":" + gameId + ":" + seat;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
        }
        return new Rng(hash);
    }

    /** The next 64-bit value (read as unsigned). */
    public long next() {
        state += 0x9e3779b97f4a7c15L;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A uniform integer in [0, bound) without modulo bias (bound > 0, read as unsigned). */
    public long below(long bound) {
        long limit = -1L - Long.remainderUnsigned(-1L, bound);
        long value;
        do {
            value = next();
        } while (Long.compareUnsigned(value, limit) >= 0);
        return Long.remainderUnsigned(value, bound);
    }

    /** A uniform integer in [low, high]. */
    public long between(long low, long high) {
        return low + below(high - low + 1);
    }
}
