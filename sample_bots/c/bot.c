/*
 * A cardarena bot in C: plays a uniformly random legal action in every game, drawing an integer
 * inside every range it is offered. Seeded (--seed N, then per game id and seat), so its play is
 * reproducible. Usage: ./bot [--seed N]
 *
 * The wire protocol (protocol/PROTOCOL.md): each message is a frame, a 4-byte big-endian length
 * followed by that many bytes of one msgpack map. msgpack-c (Debian's libmsgpack-dev) decodes
 * and encodes the maps. Logs go to stderr; stdout carries frames only.
 */
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTOCOL_VERSION 1
#define MAX_FRAME (64u << 20) /* a frame larger than this from the referee means a broken stream */

/* splitmix64: a tiny, well-mixed PRNG; its whole state is one 64-bit word. */
static uint64_t rng_state;

static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound) without modulo bias (bound > 0). */
static uint64_t random_below(uint64_t bound) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value;
    do {
        value = next_random();
    } while (value >= limit);
    return value % bound;
}

/* FNV-1a over bytes, continuing from `hash`: turns "seed:game_id:seat" into a PRNG seed. */
static uint64_t hash_bytes(uint64_t hash, const char *data, size_t size) {
    for (size_t i = 0; i < size; i++) {
        hash = (hash ^ (unsigned char)data[i]) * 0x100000001b3ULL;
    }
    return hash;
}

/* The value under `key` in a msgpack map, or NULL when absent (or `map` is not a map). */
static const msgpack_object *lookup(const msgpack_object *map, const char *key) {
    if (map->type != MSGPACK_OBJECT_MAP) return NULL;
    size_t length = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == length &&
            memcmp(k->via.str.ptr, key, length) == 0) {
            return &map->via.map.ptr[i].val;
        }
    }
    return NULL;
}

/* An integer field as int64 (0 when it is not an integer: the referee always sends integers). */
static int64_t as_int(const msgpack_object *value) {
    if (value == NULL) return 0;
    if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return (int64_t)value->via.u64;
    if (value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return value->via.i64;
    return 0;
}

/* A legal-entry field that offers an inclusive integer range is exactly {"min": a, "max": b}. */
static int is_range(const msgpack_object *value) {
    return value->type == MSGPACK_OBJECT_MAP && value->via.map.size == 2 &&
           lookup(value, "min") != NULL && lookup(value, "max") != NULL;
}

static void pack_str(msgpack_packer *pk, const char *text) {
    size_t length = strlen(text);
    msgpack_pack_str(pk, length);
    msgpack_pack_str_body(pk, text, length);
}

/* Writes one frame holding the packed body; exits if stdout is gone (the referee ended us). */
static void send_frame(const msgpack_sbuffer *body) {
    unsigned char header[4] = {
        (unsigned char)(body->size >> 24), (unsigned char)(body->size >> 16),
        (unsigned char)(body->size >> 8), (unsigned char)body->size,
    };
    if (fwrite(header, 1, 4, stdout) != 4 || fwrite(body->data, 1, body->size, stdout) != body->size ||
        fflush(stdout) != 0) {
        perror("bot: writing a frame");
        exit(1);
    }
}

/* Reads exactly `size` bytes; returns 0 at a clean end of input before the first byte. */
static int read_exactly(unsigned char *buffer, size_t size) {
    size_t got = fread(buffer, 1, size, stdin);
    if (got == size) return 1;
    if (got == 0 && feof(stdin)) return 0;
    fprintf(stderr, "bot: input ended inside a frame\n");
    exit(1);
}

static void send_hello(void) {
    msgpack_sbuffer body;
    msgpack_sbuffer_init(&body);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    pack_str(&pk, "type");
    pack_str(&pk, "hello");
    pack_str(&pk, "protocol");
    msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_str(&pk, "name");
    pack_str(&pk, "c-random");
    pack_str(&pk, "version");
    pack_str(&pk, "1");
    send_frame(&body);
    msgpack_sbuffer_destroy(&body);
}

/* Answers a decision with a random legal entry, a random integer drawn inside every range. */
static void send_action(const msgpack_object *request) {
    const msgpack_object *legal = lookup(request, "legal");
    if (legal == NULL || legal->type != MSGPACK_OBJECT_ARRAY || legal->via.array.size == 0) {
        fprintf(stderr, "bot: decision without a legal list\n");
        exit(1);
    }
    const msgpack_object *entry = &legal->via.array.ptr[random_below(legal->via.array.size)];

    msgpack_sbuffer body;
    msgpack_sbuffer_init(&body);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    pack_str(&pk, "type");
    pack_str(&pk, "action");
    pack_str(&pk, "decision");
    msgpack_pack_int64(&pk, as_int(lookup(request, "decision")));
    pack_str(&pk, "action");
    msgpack_pack_map(&pk, entry->via.map.size);
    for (uint32_t i = 0; i < entry->via.map.size; i++) {
        const msgpack_object_kv *field = &entry->via.map.ptr[i];
        msgpack_pack_object(&pk, field->key);
        if (is_range(&field->val)) {
            int64_t low = as_int(lookup(&field->val, "min"));
            int64_t high = as_int(lookup(&field->val, "max"));
            msgpack_pack_int64(&pk, low + (int64_t)random_below((uint64_t)(high - low) + 1));
        } else {
            msgpack_pack_object(&pk, field->val);
        }
    }
    send_frame(&body);
    msgpack_sbuffer_destroy(&body);
}

/* Reseeds per game, so a game's play does not depend on the games before it. */
static void start_game(uint64_t base_seed, const msgpack_object *message) {
    char prefix[64];
    int length = snprintf(prefix, sizeof prefix, "%llu:", (unsigned long long)base_seed);
    uint64_t hash = hash_bytes(0xcbf29ce484222325ULL, prefix, (size_t)length);
    const msgpack_object *game_id = lookup(message, "game_id");
    if (game_id != NULL && game_id->type == MSGPACK_OBJECT_STR) {
        hash = hash_bytes(hash, game_id->via.str.ptr, game_id->via.str.size);
    }
    length = snprintf(prefix, sizeof prefix, ":%lld", (long long)as_int(lookup(message, "seat")));
    rng_state = hash_bytes(hash, prefix, (size_t)length);
}

/* Handles one message; returns 0 once the referee says shutdown. */
static int handle(uint64_t base_seed, const msgpack_object *message) {
    const msgpack_object *type = lookup(message, "type");
    if (type == NULL || type->type != MSGPACK_OBJECT_STR) {
        fprintf(stderr, "bot: message without a type\n");
        exit(1);
    }
    const char *kind = type->via.str.ptr;
    size_t size = type->via.str.size;
#define IS(name) (size == strlen(name) && memcmp(kind, name, size) == 0)
    if (IS("hello")) {
        send_hello();
    } else if (IS("game_start")) {
        start_game(base_seed, message);
    } else if (IS("decision")) {
        send_action(message);
    } else if (IS("shutdown")) {
        return 0;
    } else if (!IS("game_end")) {
        fprintf(stderr, "bot: unknown message type %.*s\n", (int)size, kind);
        exit(1);
    }
#undef IS
    return 1;
}

int main(int argc, char **argv) {
    uint64_t base_seed = 0;
    char *end = NULL;
    if (argc == 3 && strcmp(argv[1], "--seed") == 0) {
        base_seed = strtoull(argv[2], &end, 10);
    }
    if (argc != 1 && (argc != 3 || end == argv[2] || *end != '\0')) {
        fprintf(stderr, "usage: %s [--seed N]\n", argv[0]);
        return 2;
    }
    rng_state = base_seed;

    unsigned char header[4];
    int running = 1;
    while (running && read_exactly(header, 4)) {
        uint32_t length = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 |
                          (uint32_t)header[2] << 8 | header[3];
        if (length > MAX_FRAME) {
            fprintf(stderr, "bot: frame of %u bytes from the referee is too large\n", length);
            return 1;
        }
        unsigned char *body = malloc(length ? length : 1);
        if (body == NULL) {
            perror("bot: malloc");
            return 1;
        }
        if (!read_exactly(body, length)) {
            fprintf(stderr, "bot: input ended inside a frame\n");
            return 1;
        }
        msgpack_unpacked unpacked;
        msgpack_unpacked_init(&unpacked);
        size_t offset = 0;
        if (msgpack_unpack_next(&unpacked, (const char *)body, length, &offset) != MSGPACK_UNPACK_SUCCESS) {
            fprintf(stderr, "bot: the referee sent a frame that is not msgpack\n");
            return 1;
        }
        running = handle(base_seed, &unpacked.data);
        msgpack_unpacked_destroy(&unpacked);
        free(body);
    }
    return 0;
}
