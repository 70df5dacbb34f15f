package cardarena;

import java.util.List;
import java.util.Optional;

/**
 * A card in the protocol's notation: "10D" (Knock Rummy, Casino), "Ko" (Cuajo), "Q12" (Quitlok).
 * French ranks A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12 (suit '\0').
 */
public record Card(Deck deck, int rank, char suit) {
    /** Which game's cards. */
    public enum Deck { FRENCH, SPANISH, QUITLOK }

    private static final List<String> FRENCH = List.of("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K");
    private static final List<String> SPANISH = List.of("A", "3", "4", "5", "J", "H", "K");
    private static final int[] SPANISH_RANKS = {1, 3, 4, 5, 10, 11, 12};

    /** The card `value` names, or empty when it is not a card of any game. */
    public static Optional<Card> parse(Object value) {
        if (!(value instanceof String text) || text.length() < 2) {
            return Optional.empty();
        }
        if (text.matches("Q([1-9]|1[0-2])")) {
            return Optional.of(new Card(Deck.QUITLOK, Integer.parseInt(text.substring(1)), '\0'));
        }
        String rank = text.substring(0, text.length() - 1);
        char suit = text.charAt(text.length() - 1);
        if ("CDHS".indexOf(suit) >= 0 && FRENCH.contains(rank)) {
            return Optional.of(new Card(Deck.FRENCH, FRENCH.indexOf(rank) + 1, suit));
        }
        if ("oceb".indexOf(suit) >= 0 && SPANISH.contains(rank)) {
            return Optional.of(new Card(Deck.SPANISH, SPANISH_RANKS[SPANISH.indexOf(rank)], suit));
        }
        return Optional.empty();
    }
}
