package cardarena;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Helpers every bot needs: ranges, and a random legal action. Actions are maps of str keys. */
public final class Actions {
    private Actions() {
    }

    /** The inclusive bounds a legal-entry value offers.  */
    public record Range(long min, long max) {
    }

    /** The range a legal-entry value offers (exactly {"min": a, "max": b}), or empty. */
    public static Optional<Range> range(Object value) {
        if (value instanceof Map<?, ?> bounds && bounds.size() == 2
                && bounds.get("min") instanceof Long min && bounds.get("max") instanceof Long max) {
            return Optional.of(new Range(min, max));
        }
        return Optional.empty();
    }

    /** A copy of `entry` with `key` set to `value` (to answer a range with your own choice). */
    public static Map<String, Object> withInt(Map<String, Object> entry, String key, long value) {
        Map<String, Object> answer = new LinkedHashMap<>(entry);
        answer.put(key, value);
        return answer;
    }

    /** A copy of `entry` with a random integer drawn inside every range it gives (in the entry's order). */
    public static Map<String, Object> fillRanges(Map<String, Object> entry, Rng rng) {
        Map<String, Object> answer = new LinkedHashMap<>();
        entry.forEach((key, value) -> answer.put(key, range(value)
                .<Object>map(bounds -> rng.between(bounds.min(), bounds.max())).orElse(value)));
        return answer;
    }

    /** A uniformly random legal entry with every range filled: always a legal answer. */
    public static Map<String, Object> randomAction(List<Map<String, Object>> legal, Rng rng) {
        return fillRanges(legal.get((int) rng.below(legal.size())), rng);
    }
}
