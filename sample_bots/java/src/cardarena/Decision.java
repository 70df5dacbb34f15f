package cardarena;

import java.util.List;
import java.util.Map;

/**
 * What a decision offers, with the parts a bot reads most: `message` is the whole decision, `view`
 * everything the seat may see now, `legal` the legal actions, `timeMs` the limit per decision,
 * `bankMs` what is left of the seat's time bank in this game (PROTOCOL.md § 5), `log` this game's
 * events so far.
 */
public record Decision(Map<String, Object> message, Map<String, Object> view, List<Map<String, Object>> legal,
                       long number, long seat, long timeMs, long bankMs, GameLog log) {
}
