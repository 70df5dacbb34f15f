/*
 * cardarena.h: a small C library for cardarena bots (protocol/PROTOCOL.md, version 1).
 *
 * It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
 * game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
 * writes `decide`. msgpack-c (Debian: libmsgpack-dev) decodes and encodes; the library packs only
 * maps, arrays, str, ints and booleans (never bin nor extension types). Errors are reported on
 * stderr and returned as a non-zero status: stdout carries frames only.
 */
#ifndef CARDARENA_H
#define CARDARENA_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CA_PROTOCOL_VERSION 1
#define CA_MAX_SEND_FRAME (1u << 20)   /* the referee refuses a larger frame (oversize fault) */
#define CA_MAX_READ_FRAME (64u << 20)  /* a larger frame from the referee means a broken stream */

/* A seeded generator (splitmix64): the same in the C, C++, Go and Rust kits. */
typedef struct {
    uint64_t state;
} ca_rng;

/* Reseeds `rng` from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start. */
void ca_rng_seed_game(ca_rng *rng, uint64_t seed, const char *game_id, size_t game_id_size, int64_t seat);
/* A uniform integer in [0, bound) without modulo bias (bound > 0). */
uint64_t ca_rng_below(ca_rng *rng, uint64_t bound);
/* A uniform integer in [low, high] (low <= high). */
int64_t ca_rng_between(ca_rng *rng, int64_t low, int64_t high);

/* Reading decoded messages: a map's value by key (NULL when absent), an int (0 when not one). */
const msgpack_object *ca_get(const msgpack_object *map, const char *key);
int64_t ca_int(const msgpack_object *value);
bool ca_is_str(const msgpack_object *value, const char *text);
/* A legal-entry value offering an inclusive integer range is exactly {"min": a, "max": b}. */
bool ca_is_range(const msgpack_object *value);

/* Building an answer (allocated in `zone`, which the library frees after sending it). */
/* `entry` with a random integer drawn inside every range it gives. */
msgpack_object ca_fill_ranges(msgpack_zone *zone, const msgpack_object *entry, ca_rng *rng);
/* `entry` with `key` set to the integer `value` (to answer a range with your own choice). */
msgpack_object ca_with_int(msgpack_zone *zone, const msgpack_object *entry, const char *key, int64_t value);
/* A uniformly random legal entry, with every range filled: always a legal answer. */
msgpack_object ca_random_action(msgpack_zone *zone, const msgpack_object *legal, ca_rng *rng);

/* A card in the protocol's notation: "10D" (Knock Rummy, Casino), "Ko" (Cuajo), "Q12" (Quitlok). */
typedef enum { CA_FRENCH, CA_SPANISH, CA_QUITLOK } ca_deck;
typedef struct {
    ca_deck deck;
    int rank;  /* French A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12 */
    char suit; /* 'C' 'D' 'H' 'S'; 'o' 'c' 'e' 'b'; 0 for Quitlok */
} ca_card;
/* Parses a card string; false when `value` is not a card of any game. */
bool ca_parse_card(const msgpack_object *value, ca_card *card);

/* The events of the current game, oldest first (kept packed; ca_game_events unpacks them). */
typedef struct {
    msgpack_sbuffer packed;
    uint32_t count;
} ca_game_log;
/* The game's public events so far as one array (free `out` with msgpack_unpacked_destroy). */
void ca_game_events(const ca_game_log *log, msgpack_unpacked *out);

/* What a decision offers, with the parts a bot reads most. */
typedef struct {
    const msgpack_object *message; /* the whole decision message */
    const msgpack_object *view;    /* a map: everything the seat may see now */
    const msgpack_object *legal;   /* an array of maps: the legal actions */
    int64_t number, seat, time_ms; /* time_ms: the limit per decision */
    int64_t bank_ms;               /* what is left of the seat's time bank in this game (PROTOCOL.md § 5) */
    const ca_game_log *log;        /* this game's events, these included */
} ca_decision;

/* A bot: `decide` is required; the others may be NULL. `state` is passed back to each. */
typedef struct {
    const char *name;
    const char *version;
    uint64_t seed;
    void *state;
    void (*start_game)(void *state, const msgpack_object *game_start);
    msgpack_object (*decide)(void *state, const ca_decision *decision, ca_rng *rng, msgpack_zone *zone);
    void (*end_game)(void *state, const msgpack_object *game_end, const ca_game_log *log);
} ca_bot;

/* Plays on `in`/`out` until shutdown (0) or end of input (0); non-zero after a reported error. */
int ca_run(const ca_bot *bot, FILE *in, FILE *out);

/* Parses "[--seed N]" into `seed`; false (after printing the usage) for anything else. */
bool ca_parse_seed_args(int argc, char **argv, uint64_t *seed);

#endif
