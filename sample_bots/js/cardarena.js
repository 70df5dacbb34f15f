// cardarena.js: a small library for cardarena bots in JavaScript (protocol/PROTOCOL.md, version 1).
//
// It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
// game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
// writes `decide`. Types for TypeScript authors are in cardarena.d.ts (no compile step).
//
// msgpack: @msgpack/msgpack decodes maps to plain objects (message.type works) and encodes plain
// objects without extension types, strings as str and only Uint8Array as bin (the referee refuses
// bin and extension types: never put a Buffer in an action). With msgpackr instead, use
// `new Packr({ useRecords: false, mapsAsObjects: true })` for both: its defaults encode objects as
// records (an extension type) and decode maps to `Map`s, in which `message.type` is undefined.
// stdout carries frames only: log to stderr.
"use strict";

const { encode, decode } = require("@msgpack/msgpack");

const PROTOCOL_VERSION = 1;
const MAX_SEND_FRAME = 1 << 20; // the referee refuses a larger frame (oversize fault)
const MAX_READ_FRAME = 64 << 20; // a larger frame from the referee means a broken stream
const MASK64 = (1n << 64n) - 1n;

/** A protocol error: the library prints its message as one line on stderr and exits with 1. */
class ProtocolError extends Error {}

/** A seeded generator (splitmix64): the same in every starter kit, so they replay alike. */
class Rng {
  /** @param {bigint} state */
  constructor(state) {
    this.state = BigInt.asUintN(64, state);
  }

  /** Seeded from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start. */
  static forGame(seed, gameId, seat) {
    let hash = 0xcbf29ce484222325n;
    for (const byte of Buffer.from(`${seed}:${gameId}:${seat}`, "utf8")) {
      hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & MASK64;
    }
    return new Rng(hash);
  }

  /** The next 64-bit value, as a bigint. */
  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }

  /** A uniform integer in [0, bound) without modulo bias (bound > 0). */
  below(bound) {
    const big = BigInt(bound);
    const limit = MASK64 - (MASK64 % big);
    let value;
    do {
      value = this.next();
    } while (value >= limit);
    return Number(value % big);
  }

  /** A uniform integer in [low, high]. */
  between(low, high) {
    return low + this.below(high - low + 1);
  }
}

/** The bounds of a legal-entry value offering an inclusive integer range (exactly {min, max}), or null. */
function range(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 2 || !Number.isInteger(value.min) || !Number.isInteger(value.max)) return null;
  return { min: value.min, max: value.max };
}

/** A copy of `entry` with `key` set to `value` (to answer a range with your own choice). */
function withInt(entry, key, value) {
  return { ...entry, [key]: value };
}

/** A copy of `entry` with a random integer drawn inside every range it gives (in the entry's order). */
function fillRanges(entry, rng) {
  const action = {};
  for (const [key, value] of Object.entries(entry)) {
    const bounds = range(value);
    action[key] = bounds === null ? value : rng.between(bounds.min, bounds.max);
  }
  return action;
}

/** A uniformly random legal entry with every range filled: always a legal answer. */
function randomAction(legal, rng) {
  return fillRanges(legal[rng.below(legal.length)], rng);
}

const FRENCH_RANKS = { A: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 10, J: 11, Q: 12, K: 13 };
const SPANISH_RANKS = { A: 1, 3: 3, 4: 4, 5: 5, J: 10, H: 11, K: 12 };

/**
 * A card in the protocol's notation: "10D" (Knock Rummy, Casino), "Ko" (Cuajo), "Q12" (Quitlok).
 * French ranks A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12 (suit null).
 * Returns null when `text` is not a card of any game.
 */
function parseCard(text) {
  if (typeof text !== "string") return null;
  const quitlok = /^Q([1-9]|1[0-2])$/.exec(text);
  if (quitlok) return { deck: "quitlok", rank: Number(quitlok[1]), suit: null };
  const rank = text.slice(0, -1);
  const suit = text.slice(-1);
  if ("CDHS".includes(suit) && Object.hasOwn(FRENCH_RANKS, rank)) {
    return { deck: "french", rank: FRENCH_RANKS[rank], suit };
  }
  if ("oceb".includes(suit) && Object.hasOwn(SPANISH_RANKS, rank)) {
    return { deck: "spanish", rank: SPANISH_RANKS[rank], suit };
  }
  return null;
}

/** The current game's start message and public events, oldest first. */
class GameLog {
  constructor(start = null) {
    this.start = start;
    this.events = [];
  }

  add(events) {
    if (Array.isArray(events)) this.events.push(...events);
  }
}

/** Encodes one message as a frame (header and body). */
function frame(message) {
  const body = encode(message);
  if (body.length > MAX_SEND_FRAME) {
    throw new ProtocolError(`a frame of ${body.length} bytes is over the referee's limit of ${MAX_SEND_FRAME}`);
  }
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, Buffer.from(body.buffer, body.byteOffset, body.length)]);
}

/** Splits incoming bytes into frame bodies, whatever chunks they arrive in. */
class FrameReader {
  constructor() {
    this.pending = Buffer.alloc(0);
  }

  /** The whole frame bodies completed by `chunk`. */
  push(chunk) {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const bodies = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_READ_FRAME) throw new ProtocolError(`a frame of ${length} bytes from the referee is too large`);
      if (this.pending.length < 4 + length) break;
      bodies.push(this.pending.subarray(4, 4 + length));
      this.pending = this.pending.subarray(4 + length);
    }
    return bodies;
  }

  /** Throws when input ended inside a frame. */
  finish() {
    if (this.pending.length) throw new ProtocolError("input ended inside a frame");
  }
}

/** Decodes one frame body (the referee sends only str, never bin nor extension types). */
function decodeMessage(body) {
  try {
    return decode(body);
  } catch (error) {
    throw new ProtocolError(`the referee sent a frame that is not one msgpack value: ${error.message}`);
  }
}

/** Parses "[--seed N]" (a 64-bit unsigned seed, default 0), exiting with the usage otherwise. */
function parseSeedArgs(argv = process.argv.slice(2)) {
  if (argv.length === 0) return 0n;
  if (argv.length === 2 && argv[0] === "--seed" && /^\d+$/.test(argv[1]) && BigInt(argv[1]) <= MASK64) {
    return BigInt(argv[1]);
  }
  process.stderr.write(`usage: node ${require("path").basename(process.argv[1])} [--seed N]\n`);
  process.exit(2);
}

/**
 * Plays on stdin/stdout until shutdown or end of input. `bot.decide(decision, rng)` returns one
 * legal entry with an integer inside every range; `bot.startGame(start)` and
 * `bot.endGame(end, log)` are optional.
 */
function run(bot, { name, version = "1", seed = parseSeedArgs(), input = process.stdin, output = process.stdout } = {}) {
  let rng = new Rng(BigInt(seed));
  let log = new GameLog();
  const reader = new FrameReader();
  const send = (message) => output.write(frame(message));

  // Answers one message; true after shutdown.
  function handle(message) {
    if (message === null || typeof message !== "object" || Array.isArray(message) || typeof message.type !== "string") {
      throw new ProtocolError("the referee sent a frame that is not a msgpack map with a str \"type\"");
    }
    switch (message.type) {
      case "hello":
        send({ type: "hello", protocol: PROTOCOL_VERSION, name, version });
        return false;
      case "game_start":
        // Reseed per game, so a game's play does not depend on the games before it.
        rng = Rng.forGame(seed, message.game_id ?? "", message.seat ?? 0);
        log = new GameLog(message);
        if (bot.startGame) bot.startGame(message);
        return false;
      case "decision":
        if (!Array.isArray(message.legal) || message.legal.length === 0) {
          throw new ProtocolError("a decision without a legal list");
        }
        log.add(message.events);
        send({ type: "action", decision: message.decision, action: bot.decide({ ...message, log }, rng) });
        return false;
      case "game_end":
        log.add(message.events);
        if (bot.endGame) bot.endGame(message, log);
        return false;
      case "shutdown":
        return true;
      default:
        throw new ProtocolError(`unknown message type ${JSON.stringify(message.type)} from the referee`);
    }
  }

  // Ends the process: stdout to a pipe is written synchronously on Linux, so no frame is lost.
  function fail(error) {
    process.stderr.write(`cardarena: ${error instanceof ProtocolError ? error.message : error.stack}\n`);
    process.exit(1);
  }

  input.on("data", (chunk) => {
    try {
      for (const body of reader.push(chunk)) {
        if (handle(decodeMessage(body))) process.exit(0);
      }
    } catch (error) {
      fail(error);
    }
  });
  input.on("end", () => {
    try {
      reader.finish();
      process.exit(0);
    } catch (error) {
      fail(error);
    }
  });
}

module.exports = {
  PROTOCOL_VERSION, MAX_SEND_FRAME, MAX_READ_FRAME, ProtocolError, Rng, GameLog, FrameReader,
  range, withInt, fillRanges, randomAction, parseCard, frame, parseSeedArgs, run,
};
