/* cardarena.c: framing, handshake, game loop and helpers for C bots (see cardarena.h). */
#include "cardarena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next_random(ca_rng *rng) {
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t ca_rng_below(ca_rng *rng, uint64_t bound) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value;
    do {
        value = next_random(rng);
    } while (value >= limit);
    return value % bound;
}

int64_t ca_rng_between(ca_rng *rng, int64_t low, int64_t high) {
    return low + (int64_t)ca_rng_below(rng, (uint64_t)(high - low) + 1);
}

static uint64_t hash_bytes(uint64_t hash, const char *data, size_t size) {
    for (size_t i = 0; i < size; i++) hash = (hash ^ (unsigned char)data[i]) * 0x100000001b3ULL;
    return hash;
}

void ca_rng_seed_game(ca_rng *rng, uint64_t seed, const char *game_id, size_t game_id_size, int64_t seat) {
    char text[48];
    int length = snprintf(text, sizeof text, "%llu:", (unsigned long long)seed);
    uint64_t hash = hash_bytes(0xcbf29ce484222325ULL, text, (size_t)length);
    hash = hash_bytes(hash, game_id, game_id_size);
    length = snprintf(text, sizeof text, ":%lld", (long long)seat);
    rng->state = hash_bytes(hash, text, (size_t)length);
}

const msgpack_object *ca_get(const msgpack_object *map, const char *key) {
    if (map == NULL || map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        if (ca_is_str(&map->via.map.ptr[i].key, key)) return &map->via.map.ptr[i].val;
    }
    return NULL;
}

int64_t ca_int(const msgpack_object *value) {
    if (value == NULL) return 0;
    if (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return (int64_t)value->via.u64;
    if (value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return value->via.i64;
    return 0;
}

static bool is_int(const msgpack_object *value) {
    return value != NULL &&
           (value->type == MSGPACK_OBJECT_POSITIVE_INTEGER || value->type == MSGPACK_OBJECT_NEGATIVE_INTEGER);
}

bool ca_is_str(const msgpack_object *value, const char *text) {
    size_t length = strlen(text);
    return value != NULL && value->type == MSGPACK_OBJECT_STR && value->via.str.size == length &&
           memcmp(value->via.str.ptr, text, length) == 0;
}

bool ca_is_range(const msgpack_object *value) {
    return value != NULL && value->type == MSGPACK_OBJECT_MAP && value->via.map.size == 2 &&
           is_int(ca_get(value, "min")) && is_int(ca_get(value, "max"));
}

static msgpack_object int_object(int64_t value) {
    msgpack_object object;
    if (value >= 0) {
        object.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        object.via.u64 = (uint64_t)value;
    } else {
        object.type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        object.via.i64 = value;
    }
    return object;
}

/* A shallow copy of the map `entry` whose pairs live in `zone`, so values can be replaced. */
static msgpack_object copy_map(msgpack_zone *zone, const msgpack_object *entry) {
    msgpack_object copy = *entry;
    size_t bytes = sizeof(msgpack_object_kv) * entry->via.map.size;
    copy.via.map.ptr = msgpack_zone_malloc(zone, bytes ? bytes : 1);
    if (copy.via.map.ptr == NULL) {
        fprintf(stderr, "cardarena: out of memory\n");
        exit(1);
    }
    if (bytes) memcpy(copy.via.map.ptr, entry->via.map.ptr, bytes);
    return copy;
}

msgpack_object ca_fill_ranges(msgpack_zone *zone, const msgpack_object *entry, ca_rng *rng) {
    msgpack_object copy = copy_map(zone, entry);
    for (uint32_t i = 0; i < copy.via.map.size; i++) {
        msgpack_object *value = &copy.via.map.ptr[i].val;
        if (ca_is_range(value)) {
            *value = int_object(ca_rng_between(rng, ca_int(ca_get(value, "min")), ca_int(ca_get(value, "max"))));
        }
    }
    return copy;
}

msgpack_object ca_with_int(msgpack_zone *zone, const msgpack_object *entry, const char *key, int64_t value) {
    msgpack_object copy = copy_map(zone, entry);
    for (uint32_t i = 0; i < copy.via.map.size; i++) {
        if (ca_is_str(&copy.via.map.ptr[i].key, key)) copy.via.map.ptr[i].val = int_object(value);
    }
    return copy;
}

msgpack_object ca_random_action(msgpack_zone *zone, const msgpack_object *legal, ca_rng *rng) {
    return ca_fill_ranges(zone, &legal->via.array.ptr[ca_rng_below(rng, legal->via.array.size)], rng);
}

bool ca_parse_card(const msgpack_object *value, ca_card *card) {
    if (value == NULL || value->type != MSGPACK_OBJECT_STR || value->via.str.size < 2 || value->via.str.size > 3) {
        return false;
    }
    char text[4] = {0};
    memcpy(text, value->via.str.ptr, value->via.str.size);
    size_t size = value->via.str.size;
    if (text[0] == 'Q' && text[1] >= '1' && text[1] <= '9') { /* Quitlok: Q1 .. Q12 */
        int rank = atoi(text + 1);
        if (rank < 1 || rank > 12 || (size == 3 && (text[2] < '0' || text[2] > '9' || text[1] != '1'))) return false;
        *card = (ca_card){CA_QUITLOK, rank, 0};
        return true;
    }
    char suit = text[size - 1];
    text[size - 1] = 0;
    static const char *french[] = {"A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"};
    static const char *spanish[] = {"A", "3", "4", "5", "J", "H", "K"};
    static const int spanish_ranks[] = {1, 3, 4, 5, 10, 11, 12};
    if (strchr("CDHS", suit) != NULL) {
        for (int i = 0; i < 13; i++) {
            if (strcmp(text, french[i]) == 0) {
                *card = (ca_card){CA_FRENCH, i + 1, suit};
                return true;
            }
        }
    } else if (strchr("oceb", suit) != NULL) {
        for (int i = 0; i < 7; i++) {
            if (strcmp(text, spanish[i]) == 0) {
                *card = (ca_card){CA_SPANISH, spanish_ranks[i], suit};
                return true;
            }
        }
    }
    return false;
}

static void log_reset(ca_game_log *log) {
    msgpack_sbuffer_clear(&log->packed);
    log->count = 0;
}

static void log_append(ca_game_log *log, const msgpack_object *events) {
    if (events == NULL || events->type != MSGPACK_OBJECT_ARRAY) return;
    msgpack_packer packer;
    msgpack_packer_init(&packer, &log->packed, msgpack_sbuffer_write);
    for (uint32_t i = 0; i < events->via.array.size; i++) msgpack_pack_object(&packer, events->via.array.ptr[i]);
    log->count += events->via.array.size;
}

void ca_game_events(const ca_game_log *log, msgpack_unpacked *out) {
    msgpack_sbuffer whole;
    msgpack_sbuffer_init(&whole);
    msgpack_packer packer;
    msgpack_packer_init(&packer, &whole, msgpack_sbuffer_write);
    msgpack_pack_array(&packer, log->count);
    msgpack_sbuffer_write(&whole, log->packed.data, log->packed.size);
    msgpack_unpacked_init(out);
    size_t offset = 0;
    msgpack_unpack_next(out, whole.data, whole.size, &offset);
    msgpack_sbuffer_destroy(&whole);
}

/* Reads exactly `size` bytes: 1 when read, 0 at a clean end of input before the first, -1 on error. */
static int read_exactly(FILE *in, unsigned char *buffer, size_t size) {
    size_t got = fread(buffer, 1, size, in);
    if (got == size) return 1;
    if (got == 0 && feof(in)) return 0;
    fprintf(stderr, "cardarena: %s\n", ferror(in) ? strerror(errno) : "input ended inside a frame");
    return -1;
}

static void pack_str(msgpack_packer *packer, const char *text) {
    size_t length = strlen(text);
    msgpack_pack_str(packer, length);
    msgpack_pack_str_body(packer, text, length);
}

/* Writes the packed body as one frame and flushes; non-zero (reported) when it cannot. */
static int send_frame(FILE *out, const msgpack_sbuffer *body) {
    if (body->size > CA_MAX_SEND_FRAME) {
        fprintf(stderr, "cardarena: a frame of %zu bytes is over the referee's limit of %u\n", body->size,
                CA_MAX_SEND_FRAME);
        return 1;
    }
    unsigned char header[4] = {(unsigned char)(body->size >> 24), (unsigned char)(body->size >> 16),
                               (unsigned char)(body->size >> 8), (unsigned char)body->size};
    if (fwrite(header, 1, 4, out) != 4 || fwrite(body->data, 1, body->size, out) != body->size || fflush(out) != 0) {
        fprintf(stderr, "cardarena: writing a frame: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* A message being packed: its buffer and packer, opened with the map header and its "type". */
typedef struct {
    msgpack_sbuffer body;
    msgpack_packer packer;
} outgoing;

static void open_message(outgoing *message, uint32_t pairs, const char *type) {
    msgpack_sbuffer_init(&message->body);
    msgpack_packer_init(&message->packer, &message->body, msgpack_sbuffer_write);
    msgpack_pack_map(&message->packer, pairs);
    pack_str(&message->packer, "type");
    pack_str(&message->packer, type);
}

/* Sends the packed message as one frame and frees its buffer; non-zero (reported) on failure. */
static int send_message(outgoing *message, FILE *out) {
    int status = send_frame(out, &message->body);
    msgpack_sbuffer_destroy(&message->body);
    return status;
}

static int send_hello(const ca_bot *bot, FILE *out) {
    outgoing hello;
    open_message(&hello, 4, "hello");
    pack_str(&hello.packer, "protocol");
    msgpack_pack_int(&hello.packer, CA_PROTOCOL_VERSION);
    pack_str(&hello.packer, "name");
    pack_str(&hello.packer, bot->name);
    pack_str(&hello.packer, "version");
    pack_str(&hello.packer, bot->version);
    return send_message(&hello, out);
}

static int answer(const ca_bot *bot, const msgpack_object *message, ca_game_log *log, ca_rng *rng, FILE *out) {
    ca_decision decision = {message, ca_get(message, "view"), ca_get(message, "legal"),
                            ca_int(ca_get(message, "decision")), ca_int(ca_get(message, "seat")),
                            ca_int(ca_get(message, "time_ms")), ca_int(ca_get(message, "bank_ms")), log};
    if (decision.legal == NULL || decision.legal->type != MSGPACK_OBJECT_ARRAY || decision.legal->via.array.size == 0) {
        fprintf(stderr, "cardarena: a decision without a legal list\n");
        return 1;
    }
    log_append(log, ca_get(message, "events"));
    msgpack_zone *zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
    msgpack_object action = bot->decide(bot->state, &decision, rng, zone);
    outgoing reply;
    open_message(&reply, 3, "action");
    pack_str(&reply.packer, "decision");
    msgpack_pack_int64(&reply.packer, decision.number);
    pack_str(&reply.packer, "action");
    msgpack_pack_object(&reply.packer, action);
    int status = send_message(&reply, out);
    msgpack_zone_free(zone);
    return status;
}

/* Handles one message: 0 to go on, 1 after shutdown, -1 after a reported error. */
static int handle(const ca_bot *bot, const msgpack_object *message, ca_game_log *log, ca_rng *rng, FILE *out) {
    const msgpack_object *type = ca_get(message, "type");
    if (type == NULL || type->type != MSGPACK_OBJECT_STR) {
        fprintf(stderr, "cardarena: a message without a str \"type\" from the referee\n");
        return -1;
    }
    if (ca_is_str(type, "hello")) return send_hello(bot, out) ? -1 : 0;
    if (ca_is_str(type, "decision")) return answer(bot, message, log, rng, out) ? -1 : 0;
    if (ca_is_str(type, "game_start")) {
        const msgpack_object *game_id = ca_get(message, "game_id");
        bool named = game_id != NULL && game_id->type == MSGPACK_OBJECT_STR;
        ca_rng_seed_game(rng, bot->seed, named ? game_id->via.str.ptr : "", named ? game_id->via.str.size : 0,
                         ca_int(ca_get(message, "seat")));
        log_reset(log);
        if (bot->start_game != NULL) bot->start_game(bot->state, message);
        return 0;
    }
    if (ca_is_str(type, "game_end")) {
        log_append(log, ca_get(message, "events"));
        if (bot->end_game != NULL) bot->end_game(bot->state, message, log);
        return 0;
    }
    if (ca_is_str(type, "shutdown")) return 1;
    fprintf(stderr, "cardarena: unknown message type \"%.*s\" from the referee\n", (int)type->via.str.size,
            type->via.str.ptr);
    return -1;
}

int ca_run(const ca_bot *bot, FILE *in, FILE *out) {
    ca_rng rng = {bot->seed};
    ca_game_log log;
    msgpack_sbuffer_init(&log.packed);
    log.count = 0;
    int outcome = 0;
    unsigned char header[4];
    while (outcome == 0) {
        int got = read_exactly(in, header, 4);
        if (got <= 0) {
            outcome = got < 0 ? -1 : 1;
            break;
        }
        uint32_t length = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
        if (length > CA_MAX_READ_FRAME) {
            fprintf(stderr, "cardarena: a frame of %u bytes from the referee is too large\n", length);
            outcome = -1;
            break;
        }
        unsigned char *body = malloc(length ? length : 1);
        if (body == NULL) {
            fprintf(stderr, "cardarena: no memory for a frame of %u bytes\n", length);
            outcome = -1;
            break;
        }
        int read = read_exactly(in, body, length);
        if (read != 1) {
            if (read == 0) fprintf(stderr, "cardarena: input ended inside a frame\n");
            free(body);
            outcome = -1;
            break;
        }
        msgpack_unpacked unpacked;
        msgpack_unpacked_init(&unpacked);
        size_t offset = 0;
        if (msgpack_unpack_next(&unpacked, (const char *)body, length, &offset) != MSGPACK_UNPACK_SUCCESS ||
            unpacked.data.type != MSGPACK_OBJECT_MAP) {
            fprintf(stderr, "cardarena: the referee sent a frame that is not one msgpack map\n");
            outcome = -1;
        } else {
            outcome = handle(bot, &unpacked.data, &log, &rng, out);
        }
        msgpack_unpacked_destroy(&unpacked);
        free(body);
    }
    msgpack_sbuffer_destroy(&log.packed);
    return outcome < 0 ? 1 : 0;
}

bool ca_parse_seed_args(int argc, char **argv, uint64_t *seed) {
    char *end = NULL;
    if (argc == 1) return true;
    if (argc == 3 && strcmp(argv[1], "--seed") == 0) {
        errno = 0;
        *seed = strtoull(argv[2], &end, 10);
        if (end != argv[2] && *end == '\0' && errno == 0) return true;
    }
    fprintf(stderr, "usage: %s [--seed N]\n", argv[0]);
    return false;
}
