// cardarena.hpp: a small header-only C++17 library for cardarena bots (protocol/PROTOCOL.md, v1).
//
// It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
// game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
// overrides `decide`. msgpack-cxx (Debian: libmsgpack-cxx-dev) decodes and encodes; messages are
// plain `Value`s (nil, bool, int, str, array, map): never bin nor extension types. A broken stream
// throws `ProtocolError`; `run` reports it on stderr in one line. stdout carries frames only.
#pragma once

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace cardarena {

constexpr int kProtocolVersion = 1;
constexpr std::size_t kMaxSendFrame = 1u << 20;   // the referee refuses a larger frame (oversize)
constexpr std::size_t kMaxReadFrame = 64u << 20;  // a larger frame from the referee: a broken stream

// Anything the referee's stream or the bot's answer does that the protocol does not allow.
class ProtocolError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One protocol value: nil, bool, int, str, array or map (str keys).
class Value {
  public:
    using Array = std::vector<Value>;
    using Map = std::map<std::string, Value>;

    Value() : data_(nullptr) {}
    Value(std::nullptr_t) : data_(nullptr) {}
    Value(bool value) : data_(value) {}
    Value(int value) : data_(static_cast<std::int64_t>(value)) {}
    Value(std::int64_t value) : data_(value) {}
    Value(const char *value) : data_(std::string(value)) {}
    Value(std::string value) : data_(std::move(value)) {}
    Value(Array value) : data_(std::move(value)) {}
    Value(Map value) : data_(std::move(value)) {}

    bool is_nil() const { return std::holds_alternative<std::nullptr_t>(data_); }
    bool is_bool() const { return std::holds_alternative<bool>(data_); }
    bool is_int() const { return std::holds_alternative<std::int64_t>(data_); }
    bool is_str() const { return std::holds_alternative<std::string>(data_); }
    bool is_array() const { return std::holds_alternative<Array>(data_); }
    bool is_map() const { return std::holds_alternative<Map>(data_); }

    bool as_bool() const { return get<bool>("a bool"); }
    std::int64_t as_int() const { return get<std::int64_t>("an int"); }
    const std::string &as_str() const { return get<std::string>("a str"); }
    const Array &as_array() const { return get<Array>("an array"); }
    const Map &as_map() const { return get<Map>("a map"); }
    Map &as_map() { return const_cast<Map &>(std::as_const(*this).as_map()); }

    // The value under `key` of a map (nil when absent).
    const Value &operator[](const std::string &key) const {
        static const Value nil;
        const Map &map = as_map();
        auto found = map.find(key);
        return found == map.end() ? nil : found->second;
    }
    bool contains(const std::string &key) const { return is_map() && as_map().count(key) > 0; }
    bool operator==(const Value &other) const { return data_ == other.data_; }
    bool operator!=(const Value &other) const { return !(*this == other); }

  private:
    template <typename T>
    const T &get(const char *what) const {
        if (const T *value = std::get_if<T>(&data_)) return *value;
        throw ProtocolError(std::string("expected ") + what);
    }
    std::variant<std::nullptr_t, bool, std::int64_t, std::string, Array, Map> data_;
};

// A decoded msgpack object as a Value; bin, extension types and floats are not protocol values.
inline Value from_msgpack(const msgpack::object &object) {
    switch (object.type) {
    case msgpack::type::NIL: return Value();
    case msgpack::type::BOOLEAN: return Value(object.via.boolean);
    case msgpack::type::POSITIVE_INTEGER:
        if (object.via.u64 > static_cast<std::uint64_t>(INT64_MAX)) throw ProtocolError("an int above 2^63-1");
        return Value(static_cast<std::int64_t>(object.via.u64));
    case msgpack::type::NEGATIVE_INTEGER: return Value(object.via.i64);
    case msgpack::type::STR: return Value(std::string(object.via.str.ptr, object.via.str.size));
    case msgpack::type::ARRAY: {
        Value::Array array;
        array.reserve(object.via.array.size);
        for (std::uint32_t i = 0; i < object.via.array.size; ++i) array.push_back(from_msgpack(object.via.array.ptr[i]));
        return Value(std::move(array));
    }
    case msgpack::type::MAP: {
        Value::Map map;
        for (std::uint32_t i = 0; i < object.via.map.size; ++i) {
            const msgpack::object_kv &pair = object.via.map.ptr[i];
            if (pair.key.type != msgpack::type::STR) throw ProtocolError("a map key that is not a str");
            map.emplace(std::string(pair.key.via.str.ptr, pair.key.via.str.size), from_msgpack(pair.val));
        }
        return Value(std::move(map));
    }
    default: throw ProtocolError("a msgpack value the protocol does not use (bin, extension or float)");
    }
}

// Packs a Value with str (never bin) strings and no extension types.
template <typename Stream>
void pack(msgpack::packer<Stream> &packer, const Value &value) {
    if (value.is_nil()) {
        packer.pack_nil();
    } else if (value.is_bool()) {
        value.as_bool() ? packer.pack_true() : packer.pack_false();
    } else if (value.is_int()) {
        packer.pack_int64(value.as_int());
    } else if (value.is_str()) {
        packer.pack_str(static_cast<std::uint32_t>(value.as_str().size()));
        packer.pack_str_body(value.as_str().data(), static_cast<std::uint32_t>(value.as_str().size()));
    } else if (value.is_array()) {
        packer.pack_array(static_cast<std::uint32_t>(value.as_array().size()));
        for (const Value &item : value.as_array()) pack(packer, item);
    } else {
        packer.pack_map(static_cast<std::uint32_t>(value.as_map().size()));
        for (const auto &[key, item] : value.as_map()) {
            pack(packer, Value(key));
            pack(packer, item);
        }
    }
}

// A seeded generator (splitmix64): the same in the C, C++, Go and Rust kits.
class Rng {
  public:
    explicit Rng(std::uint64_t state = 0) : state_(state) {}

    // Reseeds from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start.
    static Rng for_game(std::uint64_t seed, const std::string &game_id, std::int64_t seat) {
        std::string text = std::to_string(seed) + ":" + game_id + ":" + std::to_string(seat);
        std::uint64_t hash = 0xcbf29ce484222325ULL;
        for (unsigned char byte : text) hash = (hash ^ byte) * 0x100000001b3ULL;
        return Rng(hash);
    }
    // A uniform integer in [0, bound) without modulo bias (bound > 0).
    std::uint64_t below(std::uint64_t bound) {
        std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
        std::uint64_t value;
        do value = next(); while (value >= limit);
        return value % bound;
    }
    // A uniform integer in [low, high].
    std::int64_t between(std::int64_t low, std::int64_t high) {
        return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low) + 1));
    }

  private:
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::uint64_t state_;
};

// A legal-entry value offering an inclusive integer range is exactly {"min": a, "max": b}.
inline bool is_range(const Value &value) {
    return value.is_map() && value.as_map().size() == 2 && value["min"].is_int() && value["max"].is_int();
}

// `entry` with `key` set to `value` (to answer a range with your own choice).
inline Value with_int(Value entry, const std::string &key, std::int64_t value) {
    entry.as_map()[key] = Value(value);
    return entry;
}

// `entry` with a random integer drawn inside every range it gives.
inline Value fill_ranges(Value entry, Rng &rng) {
    for (auto &[key, value] : entry.as_map()) {
        if (is_range(value)) value = Value(rng.between(value["min"].as_int(), value["max"].as_int()));
    }
    return entry;
}

// A uniformly random legal entry with every range filled: always a legal answer.
inline Value random_action(const Value::Array &legal, Rng &rng) {
    return fill_ranges(legal.at(rng.below(legal.size())), rng);
}

// A card in the protocol's notation: "10D" (Knock Rummy, Casino), "Ko" (Cuajo), "Q12" (Quitlok).
struct Card {
    enum class Deck { French, Spanish, Quitlok } deck;
    int rank;   // French A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12
    char suit;  // 'C' 'D' 'H' 'S'; 'o' 'c' 'e' 'b'; 0 for Quitlok
};

// The card a string names, or nothing when it names no card of any game.
inline std::optional<Card> parse_card(const std::string &text) {
    static const std::vector<std::string> quitlok = {"Q1", "Q2", "Q3", "Q4", "Q5", "Q6",
                                                     "Q7", "Q8", "Q9", "Q10", "Q11", "Q12"};
    static const std::vector<std::string> french = {"A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"};
    static const std::vector<std::pair<std::string, int>> spanish = {{"A", 1}, {"3", 3}, {"4", 4}, {"5", 5},
                                                                     {"J", 10}, {"H", 11}, {"K", 12}};
    for (std::size_t i = 0; i < quitlok.size(); ++i) {
        if (text == quitlok[i]) return Card{Card::Deck::Quitlok, static_cast<int>(i) + 1, 0};
    }
    if (text.size() < 2) return std::nullopt;
    std::string rank = text.substr(0, text.size() - 1);
    char suit = text.back();
    if (std::string("CDHS").find(suit) != std::string::npos) {
        for (std::size_t i = 0; i < french.size(); ++i) {
            if (rank == french[i]) return Card{Card::Deck::French, static_cast<int>(i) + 1, suit};
        }
    } else if (std::string("oceb").find(suit) != std::string::npos) {
        for (const auto &[name, number] : spanish) {
            if (rank == name) return Card{Card::Deck::Spanish, number, suit};
        }
    }
    return std::nullopt;
}

// The public events of the current game, oldest first.
struct GameLog {
    Value game_start;
    Value::Array events;
};

// What a decision offers, with the parts a bot reads most.
struct Decision {
    const Value &message;  // the whole decision message
    const Value &view;     // everything the seat may see now
    const Value::Array &legal;
    std::int64_t number;
    std::int64_t time_ms;  // the limit per decision
    std::int64_t bank_ms;  // what is left of the seat's time bank in this game (PROTOCOL.md § 5)
    const GameLog &log;  // this game's events, these included
};

// A bot: override `decide`; the other hooks are optional.
class Bot {
  public:
    virtual ~Bot() = default;
    virtual std::string name() const = 0;
    virtual std::string version() const { return "1"; }
    virtual void start_game(const Value &game_start) { (void)game_start; }
    virtual Value decide(const Decision &decision, Rng &rng) = 0;
    virtual void end_game(const Value &game_end, const GameLog &log) { (void)game_end, (void)log; }
};

// The next message, or nothing at a clean end of input.
inline std::optional<Value> read_message(std::FILE *in) {
    unsigned char header[4];
    std::size_t got = std::fread(header, 1, 4, in);
    if (got == 0 && std::feof(in)) return std::nullopt;
    if (got != 4) throw ProtocolError("input ended inside a frame header");
    std::size_t length = std::size_t(header[0]) << 24 | std::size_t(header[1]) << 16 | std::size_t(header[2]) << 8 | header[3];
    if (length > kMaxReadFrame) throw ProtocolError("a frame of " + std::to_string(length) + " bytes is too large");
    std::vector<char> body(length);
    if (std::fread(body.data(), 1, length, in) != length) throw ProtocolError("input ended inside a frame");
    Value message;
    try {
        message = from_msgpack(msgpack::unpack(body.data(), length).get());
    } catch (const msgpack::unpack_error &error) {
        throw ProtocolError(std::string("a frame that is not msgpack: ") + error.what());
    }
    if (!message.is_map() || !message["type"].is_str()) throw ProtocolError("a frame that is not a map with a str \"type\"");
    return message;
}

// Sends one message as a frame and flushes.
inline void write_message(std::FILE *out, const Value &message) {
    msgpack::sbuffer body;
    msgpack::packer<msgpack::sbuffer> packer(body);
    pack(packer, message);
    if (body.size() > kMaxSendFrame) throw ProtocolError("a frame of " + std::to_string(body.size()) + " bytes is over the 1 MiB limit");
    unsigned char header[4] = {static_cast<unsigned char>(body.size() >> 24), static_cast<unsigned char>(body.size() >> 16),
                               static_cast<unsigned char>(body.size() >> 8), static_cast<unsigned char>(body.size())};
    if (std::fwrite(header, 1, 4, out) != 4 || std::fwrite(body.data(), 1, body.size(), out) != body.size() ||
        std::fflush(out) != 0) {
        throw ProtocolError("cannot write to stdout (the referee has gone)");
    }
}

// Speaks the protocol until shutdown or end of input; throws ProtocolError on a broken stream.
inline void serve(Bot &bot, std::uint64_t seed, std::FILE *in, std::FILE *out) {
    Rng rng(seed);
    GameLog log;
    while (std::optional<Value> message = read_message(in)) {
        const std::string &type = (*message)["type"].as_str();
        if (type == "hello") {
            write_message(out, Value::Map{{"type", "hello"}, {"protocol", kProtocolVersion},
                                          {"name", bot.name()}, {"version", bot.version()}});
        } else if (type == "game_start") {
            rng = Rng::for_game(seed, (*message)["game_id"].as_str(), (*message)["seat"].as_int());
            log = GameLog{*message, {}};
            bot.start_game(*message);
        } else if (type == "decision") {
            for (const Value &event : (*message)["events"].as_array()) log.events.push_back(event);
            const Value::Array &legal = (*message)["legal"].as_array();
            if (legal.empty()) throw ProtocolError("a decision without legal actions");
            Decision decision{*message, (*message)["view"], legal, (*message)["decision"].as_int(),
                              (*message)["time_ms"].as_int(),
                              message->contains("bank_ms") ? (*message)["bank_ms"].as_int() : 0, log};
            Value action = bot.decide(decision, rng);
            write_message(out, Value::Map{{"type", "action"}, {"decision", decision.number}, {"action", action}});
        } else if (type == "game_end") {
            for (const Value &event : (*message)["events"].as_array()) log.events.push_back(event);
            bot.end_game(*message, log);
        } else if (type == "shutdown") {
            return;
        } else {
            throw ProtocolError("unknown message type \"" + type + "\" from the referee");
        }
    }
}

// Runs `bot` on stdin/stdout: the process's exit status (0 after shutdown, 1 after an error).
inline int run(Bot &bot, std::uint64_t seed) {
    try {
        serve(bot, seed, stdin, stdout);
        return 0;
    } catch (const std::exception &error) {
        std::cerr << "cardarena: " << error.what() << std::endl;
        return 1;
    }
}

// The seed of "[--seed N]", or nothing (after printing the usage) for anything else.
inline std::optional<std::uint64_t> parse_seed_args(int argc, char **argv) {
    if (argc == 1) return 0;
    if (argc == 3 && std::string(argv[1]) == "--seed") {
        try {
            std::size_t used = 0;
            std::uint64_t seed = std::stoull(argv[2], &used);
            if (used == std::string(argv[2]).size() && argv[2][0] != '-') return seed;
        } catch (const std::exception &) {
        }
    }
    std::cerr << "usage: " << argv[0] << " [--seed N]" << std::endl;
    return std::nullopt;
}

}  // namespace cardarena
