#!/usr/bin/env node
// A cardarena bot in JavaScript: plays a uniformly random legal action in every game, drawing an
// integer inside every range it is offered, seeded by --seed, then by game id and seat (the
// library reseeds `rng` at each game's start), so every game replays exactly.
// Usage: node bot.js [--seed N]
//
// Edit `decide`: it gets the decision (view, legal, events, log of the game so far) and returns
// one legal entry with an integer inside every range (cardarena.js has the helpers; its types are
// in cardarena.d.ts). Log to stderr only: stdout carries frames.
// @ts-check
"use strict";

const { randomAction, run } = require("./cardarena");

/**
 * The one function to edit: choose this decision's action.
 * @param {import("./cardarena").Decision} decision
 * @param {import("./cardarena").Rng} rng
 * @returns {import("./cardarena").Action}
 */
function decide(decision, rng) {
  return randomAction(decision.legal, rng);
}

run({ decide }, { name: "js-random", version: "2" });
