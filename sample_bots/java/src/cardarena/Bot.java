package cardarena;

import java.util.Map;

/** A bot: `decide` is required; override the others to follow the games. */
public interface Bot {
    /** One legal entry, with an integer inside every range (see {@link Actions}). */
    Map<String, Object> decide(Decision decision, Rng rng);

    default void startGame(Map<String, Object> gameStart) {
    }

    default void endGame(Map<String, Object> gameEnd, GameLog log) {
    }
}
