package cardarena;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The current game's start message and public events, oldest first. */
public final class GameLog {
    private final Map<String, Object> start;
    private final List<Object> events = new ArrayList<>();

    public GameLog(Map<String, Object> start) {
        this.start = start;
    }

    /** The game_start message (empty before the first game). */
    public Map<String, Object> start() {
        return start;
    }

    /** Every event so far, each a map. */
    public List<Object> events() {
        return events;
    }

    void add(Object more) {
        if (more instanceof List<?> list) {
            events.addAll(list);
        }
    }
}
