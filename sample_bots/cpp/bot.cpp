// A cardarena bot in C++: plays a uniformly random legal action in every game, drawing an integer
// inside every range it is offered, seeded by --seed, then by game id and seat (the library
// reseeds `rng` at each game's start), so every game replays exactly. Usage: ./bot [--seed N]
//
// Edit `decide`: it gets the decision (view, legal, this game's events) and returns one legal
// entry, with an integer inside every range (cardarena.hpp has the helpers). Log to std::cerr.
#include "cardarena.hpp"

class RandomBot : public cardarena::Bot {
  public:
    std::string name() const override { return "cpp-random"; }

    // The one function to edit: choose this decision's action.
    cardarena::Value decide(const cardarena::Decision &decision, cardarena::Rng &rng) override {
        return cardarena::random_action(decision.legal, rng);
    }
};

int main(int argc, char **argv) {
    std::optional<std::uint64_t> seed = cardarena::parse_seed_args(argc, argv);
    if (!seed) return 2;
    RandomBot bot;
    return cardarena::run(bot, *seed);
}
