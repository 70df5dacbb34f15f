package cardarena;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The handshake and the game loop: reseeds the generator per game from (seed, game id, seat). */
public final class Runner {
    private Runner() {
    }

    /** Plays on stdin/stdout until shutdown or end of input, then exits (1 after a reported error). */
    public static void run(Bot bot, String name, String version, String[] args) {
        long seed = parseSeedArgs(args);
        Wire wire = new Wire(new BufferedInputStream(System.in, 1 << 16),
                new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16));
        try {
            serve(bot, name, version, seed, wire);
        } catch (ProtocolException | IOException e) {
            System.err.println("cardarena: " + e.getMessage());
            System.exit(1);
        }
        System.exit(0);
    }

    /** The game loop: returns after shutdown or at the end of input. */
    public static void serve(Bot bot, String name, String version, long seed, Wire wire) throws IOException {
        Rng rng = new Rng(seed);
        GameLog log = new GameLog(Map.of());
        for (Map<String, Object> message = wire.read(); message != null; message = wire.read()) {
            Object type = message.get("type");
            if ("hello".equals(type)) {
                wire.write(outgoing("type", "hello", "protocol", (long) Wire.PROTOCOL_VERSION, "name", name,
                        "version", version));
            } else if ("game_start".equals(type)) {
                // Reseed per game, so a game's play does not depend on the games before it.
                rng = Rng.forGame(seed, String.valueOf(message.getOrDefault("game_id", "")), integer(message, "seat"));
                log = new GameLog(message);
                bot.startGame(message);
            } else if ("decision".equals(type)) {
                wire.write(outgoing("type", "action", "decision", integer(message, "decision"), "action",
                        Objects.requireNonNull(bot.decide(decision(message, log), rng), "decide returned null")));
            } else if ("game_end".equals(type)) {
                log.add(message.get("events"));
                bot.endGame(message, log);
            } else if ("shutdown".equals(type)) {
                return;
            } else {
                throw new ProtocolException("unknown message type \"" + type + "\" from the referee");
            }
        }
    }

    /** A message to send from its keys and values, in this order (so "type" comes first on the wire). */
    private static Map<String, Object> outgoing(Object... keysAndValues) {
        Map<String, Object> message = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            message.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return message;
    }

    @SuppressWarnings("unchecked")
    private static Decision decision(Map<String, Object> message, GameLog log) {
        if (!(message.get("legal") instanceof List<?> legal) || legal.isEmpty()
                || !legal.stream().allMatch(entry -> entry instanceof Map)) {
            throw new ProtocolException("a decision without a legal list");
        }
        log.add(message.get("events"));
        Map<String, Object> view = message.get("view") instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
        return new Decision(message, view, (List<Map<String, Object>>) legal, integer(message, "decision"),
                integer(message, "seat"), integer(message, "time_ms"), integer(message, "bank_ms"), log);
    }

    private static long integer(Map<String, Object> message, String key) {
        return message.get(key) instanceof Long value ? value : 0L;
    }

    /** Parses "[--seed N]" (a 64-bit unsigned seed, default 0), exiting with the usage otherwise. */
    public static long parseSeedArgs(String[] args) {
        if (args.length == 0) {
            return 0L;
        }
        if (args.length == 2 && args[0].equals("--seed") && args[1].matches("\\d+")) {
            try {
                return Long.parseUnsignedLong(args[1]);
            } catch (NumberFormatException e) {
                // too large for 64 bits: the usage below
            }
        }
        System.err.println("usage: java RandomBot [--seed N]");
        System.exit(2);
        return 0L;
    }
}
