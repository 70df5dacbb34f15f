import cardarena.Actions;
import cardarena.Bot;
import cardarena.Decision;
import cardarena.Rng;
import cardarena.Runner;
import java.util.Map;

/**
 * A cardarena bot in Java: plays a uniformly random legal action in every game, drawing an integer
 * inside every range it is offered, seeded by --seed, then by game id and seat (the library reseeds
 * `rng` at each game's start), so every game replays exactly. Usage: java ... RandomBot [--seed N]
 *
 * Edit `decide`: it gets the decision (view, legal, log of the game so far) and returns one legal
 * entry with an integer inside every range (package cardarena has the helpers). Log to System.err:
 * stdout carries frames.
 */
public final class RandomBot implements Bot {
    /** The one method to edit: choose this decision's action. */
    @Override
    public Map<String, Object> decide(Decision decision, Rng rng) {
        return Actions.randomAction(decision.legal(), rng);
    }

    public static void main(String[] args) {
        Runner.run(new RandomBot(), "java-random", "1", args);
    }
}
