# frozen_string_literal: true

# A cardarena bot in Ruby: plays a uniformly random legal action in every game, drawing an integer
# inside every range it is offered, seeded by --seed, then by game id and seat (the library reseeds
# `rng` at each game's start), so every game replays exactly. Usage: ruby bot.rb [--seed N]
#
# Edit `decide`: it gets the decision (a Hash: "view", "legal", "events"), the game's log so far and
# the generator, and returns one legal entry with an integer inside every range (cardarena.rb has
# the helpers). Strings you send must be UTF-8 (the library converts binary ones). Log to $stderr.
require_relative "cardarena"

class RandomBot
  # The one method to edit: choose this decision's action.
  def decide(decision, _log, rng)
    Cardarena.random_action(decision["legal"], rng)
  end
end

Cardarena.run(RandomBot.new, name: "ruby-random", version: "1")
