//! A cardarena bot in Rust: plays a uniformly random legal action in every game, drawing an
//! integer inside every range it is offered, seeded by --seed, then by game id and seat (the
//! library reseeds `rng` at each game's start), so every game replays exactly.
//! Usage: ./target/release/bot [--seed N]
//!
//! Edit `decide`: it gets the decision (view, legal), this game's log of events and the rng,
//! and returns one legal entry, with an integer inside every range (the `cardarena` library has
//! the helpers). Log to stderr (`eprintln!`) only.

use cardarena::{random_action, Bot, Decision, GameLog, Rng, Value};

struct RandomBot;

impl Bot for RandomBot {
    fn name(&self) -> &str {
        "rust-random"
    }

    /// The one function to edit: choose this decision's action.
    fn decide(&mut self, decision: &Decision, _log: &GameLog, rng: &mut Rng) -> Value {
        random_action(&decision.legal, rng)
    }
}

fn main() {
    let seed = match cardarena::parse_seed_args(std::env::args().skip(1)) {
        Ok(seed) => seed,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(2);
        }
    };
    if let Err(error) = cardarena::run(&mut RandomBot, seed) {
        eprintln!("cardarena: {error}");
        std::process::exit(1);
    }
}
