// Types of cardarena.js for TypeScript authors (protocol/PROTOCOL.md, version 1): no compile step
// is needed to use them from JavaScript with JSDoc, or from TypeScript with `import ... = require`.

/** A decoded msgpack value as the referee sends it: maps are plain objects, never bin nor extensions. */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

/** One action: a legal entry, or an answer built from one (an integer inside every range). */
export type Action = { type: string; [key: string]: Value };

export interface GameStart {
  type: "game_start";
  game_id: string;
  game: string;
  rules_version: string;
  seat: number;
  players: number;
  names: string[];
  teams: number[] | null;
  options: { [key: string]: Value };
}

export interface Decision {
  type: "decision";
  game_id: string;
  decision: number;
  seat: number;
  view: { [key: string]: Value };
  events: { [key: string]: Value }[];
  legal: Action[];
  /** The limit per decision. */
  time_ms: number;
  /** What is left of the seat's time bank in this game (PROTOCOL.md § 5). */
  bank_ms: number;
  /** This game's start and events so far, these included. */
  log: GameLog;
}

export interface GameEnd {
  type: "game_end";
  game_id: string;
  result: { [key: string]: Value };
  reveal: { [key: string]: Value };
  events: { [key: string]: Value }[];
  faults: { [key: string]: Value }[];
}

/** A bot: `decide` is required, the others are optional. */
export interface Bot {
  decide(decision: Decision, rng: Rng): Action;
  startGame?(start: GameStart): void;
  endGame?(end: GameEnd, log: GameLog): void;
}

export const PROTOCOL_VERSION: 1;
export const MAX_SEND_FRAME: number;
export const MAX_READ_FRAME: number;

export class ProtocolError extends Error {}

/** A seeded generator (splitmix64): the same in every starter kit. */
export class Rng {
  constructor(state: bigint);
  static forGame(seed: bigint, gameId: string, seat: number): Rng;
  next(): bigint;
  below(bound: number): number;
  between(low: number, high: number): number;
}

export class GameLog {
  constructor(start?: GameStart | null);
  start: GameStart | null;
  events: { [key: string]: Value }[];
  add(events: Value): void;
}

/** What `run` reads from and writes to (process.stdin and process.stdout by default). */
export interface Input {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end", listener: () => void): unknown;
}
export interface Output {
  write(data: Uint8Array): unknown;
}

export class FrameReader {
  push(chunk: Uint8Array): Uint8Array[];
  finish(): void;
}

export interface Card {
  deck: "french" | "spanish" | "quitlok";
  rank: number;
  suit: "C" | "D" | "H" | "S" | "o" | "c" | "e" | "b" | null;
}

export function range(value: Value): { min: number; max: number } | null;
export function withInt(entry: Action, key: string, value: number): Action;
export function fillRanges(entry: Action, rng: Rng): Action;
export function randomAction(legal: Action[], rng: Rng): Action;
export function parseCard(text: Value): Card | null;
export function frame(message: { type: string; [key: string]: Value }): Uint8Array;
export function parseSeedArgs(argv?: string[]): bigint;
export function run(
  bot: Bot,
  options: { name: string; version?: string; seed?: bigint; input?: Input; output?: Output },
): void;
