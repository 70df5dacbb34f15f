#!/usr/bin/env node
// A cardarena bot in JavaScript: plays a uniformly random legal action in every game, drawing an
// integer inside every range it is offered. Seeded (--seed N, then per game id and seat), so its
// play is reproducible. Usage: node bot.js [--seed N]
//
// The wire protocol (protocol/PROTOCOL.md): each message is a frame, a 4-byte big-endian length
// followed by that many bytes of one msgpack map. Logs go to stderr; stdout carries frames only.
"use strict";

// @msgpack/msgpack decodes maps to plain objects (message.type works) and encodes plain objects
// without extension types, as the protocol needs. With msgpackr instead, use
// `new Packr({ useRecords: false, mapsAsObjects: true })` for both: its defaults encode objects as
// records (an extension type the referee refuses) and `new Unpackr()` decodes maps to `Map`s, in
// which `message.type` is undefined (the bot never answers, and times out).
const { encode, decode } = require("@msgpack/msgpack");

const PROTOCOL_VERSION = 1;

// The --seed argument (default 0).
function parseSeed(argv) {
  const index = argv.indexOf("--seed");
  if (index < 0) return 0;
  const seed = Number.parseInt(argv[index + 1], 10);
  if (!Number.isInteger(seed)) {
    process.stderr.write(`usage: node bot.js [--seed N], got ${argv.slice(2).join(" ")}\n`);
    process.exit(2);
  }
  return seed;
}

// FNV-1a over a string: turns "seed:game_id:seat" into a 32-bit PRNG seed.
function hashText(text) {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash;
}

// mulberry32: a small, fast, well-mixed 32-bit PRNG; returns a function giving floats in [0, 1).
function makeRandom(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A legal-entry field offering an inclusive integer range is exactly {"min": a, "max": b}.
function isRange(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    && Object.keys(value).length === 2 && "min" in value && "max" in value;
}

// One random legal entry, with a random integer chosen inside every range it gives.
function randomAction(legal, random) {
  const entry = legal[Math.floor(random() * legal.length)];
  const action = {};
  for (const [key, value] of Object.entries(entry)) {
    action[key] = isRange(value)
      ? value.min + Math.floor(random() * (value.max - value.min + 1))
      : value;
  }
  return action;
}

// Writes one frame; stdout to a pipe is synchronous in Node on Linux, so frames are never torn.
function send(message) {
  const body = encode(message);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  process.stdout.write(Buffer.concat([header, Buffer.from(body.buffer, body.byteOffset, body.length)]));
}

const baseSeed = parseSeed(process.argv);
let random = makeRandom(hashText(String(baseSeed)));

// Answers one message from the referee.
function handle(message) {
  switch (message.type) {
    case "hello":
      send({ type: "hello", protocol: PROTOCOL_VERSION, name: "js-random", version: "1" });
      break;
    case "game_start":
      // Reseed per game, so a game's play does not depend on the games before it.
      random = makeRandom(hashText(`${baseSeed}:${message.game_id}:${message.seat}`));
      break;
    case "decision":
      send({ type: "action", decision: message.decision, action: randomAction(message.legal, random) });
      break;
    case "game_end":
      break;
    case "shutdown":
      process.exit(0);
      break;
    default:
      process.stderr.write(`unknown message type ${JSON.stringify(message.type)} from the referee\n`);
      process.exit(1);
  }
}

// Frames arrive in arbitrary chunks: keep the bytes until a whole frame is there.
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= 4) {
    const length = pending.readUInt32BE(0);
    if (pending.length < 4 + length) break;
    const body = pending.subarray(4, 4 + length);
    pending = pending.subarray(4 + length);
    handle(decode(body));
  }
});
process.stdin.on("end", () => process.exit(0));
