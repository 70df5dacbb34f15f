/*
 * A cardarena bot in C: plays a uniformly random legal action in every game, drawing an integer
 * inside every range it is offered, seeded by --seed, then by game id and seat (the library
 * reseeds `rng` at each game's start), so every game replays exactly. Usage: ./bot [--seed N]
 *
 * Edit `decide`: it gets the decision (view, legal, events so far) and returns one legal entry,
 * with an integer inside every range (cardarena.h has the helpers). Log to stderr only.
 */
#include "cardarena.h"

/* The one function to edit: choose this decision's action. */
static msgpack_object decide(void *state, const ca_decision *decision, ca_rng *rng, msgpack_zone *zone) {
    (void)state;
    return ca_random_action(zone, decision->legal, rng);
}

int main(int argc, char **argv) {
    ca_bot bot = {.name = "c-random", .version = "1", .decide = decide};
    if (!ca_parse_seed_args(argc, argv, &bot.seed)) return 2;
    return ca_run(&bot, stdin, stdout);
}
