//! A small library for cardarena bots (protocol/PROTOCOL.md, version 1).
//!
//! It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
//! game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
//! implements [`Bot::decide`]. rmp-serde (Debian: librust-rmp-serde-dev) decodes and encodes;
//! messages are plain [`Value`]s (nil, bool, int, str, array, map): never bin nor extension
//! types. stdout carries frames only: log to stderr.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// The protocol this library speaks.
pub const PROTOCOL_VERSION: i64 = 1;
/// The largest frame the referee accepts (a larger one is an oversize fault).
pub const MAX_SEND_FRAME: usize = 1 << 20;
/// The largest frame read from the referee: anything larger is a broken stream.
pub const MAX_READ_FRAME: usize = 64 << 20;

/// What can go wrong while speaking the protocol.
#[derive(Debug)]
pub enum Error {
    /// Reading stdin or writing stdout failed.
    Io(io::Error),
    /// A frame or message the protocol does not allow.
    Protocol(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(error) => write!(f, "{error}"),
            Error::Protocol(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(error: io::Error) -> Self {
        Error::Io(error)
    }
}

/// One protocol value: msgpack nil, bool, int, str, array or map with str keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Str(String),
    Array(Vec<Value>),
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// The value under `key` of a map (None when absent or not a map).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(map) => map.get(key),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(value) => Some(*value),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(value) => Some(value),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// A game starts: the seat is yours.
#[derive(Debug, Clone, Deserialize)]
pub struct GameStart {
    pub game_id: String,
    pub game: String,
    pub rules_version: String,
    pub seat: i64,
    pub players: i64,
    pub names: Vec<String>,
    pub teams: Option<Vec<i64>>,
    pub options: BTreeMap<String, Value>,
}

/// A decision: answer with one legal entry, with an integer inside every range.
#[derive(Debug, Clone, Deserialize)]
pub struct Decision {
    pub game_id: String,
    #[serde(rename = "decision")]
    pub number: i64,
    pub seat: i64,
    pub view: BTreeMap<String, Value>,
    pub events: Vec<Value>,
    pub legal: Vec<Value>,
    /// The limit per decision.
    pub time_ms: i64,
    /// What is left of the seat's time bank in this game (PROTOCOL.md § 5); 0 from an older referee.
    #[serde(default)]
    pub bank_ms: i64,
}

/// A game ends, with its result and what is revealed to everyone.
#[derive(Debug, Clone, Deserialize)]
pub struct GameEnd {
    pub game_id: String,
    pub result: Value,
    pub reveal: Value,
    pub events: Vec<Value>,
    pub faults: Vec<Value>,
}

/// A message from the referee (unknown keys are ignored).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    Hello { protocol: i64, referee: String },
    GameStart(GameStart),
    Decision(Decision),
    GameEnd(GameEnd),
    Shutdown,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Reply<'a> {
    Hello { protocol: i64, name: &'a str, version: &'a str },
    Action { decision: i64, action: &'a Value },
}

/// The current game's start and public events, oldest first.
#[derive(Debug, Clone, Default)]
pub struct GameLog {
    pub start: Option<GameStart>,
    pub events: Vec<Value>,
}

/// A bot: implement `decide`; the other hooks are optional.
pub trait Bot {
    fn name(&self) -> &str;
    fn version(&self) -> &str {
        "1"
    }
    fn start_game(&mut self, _start: &GameStart) {}
    fn decide(&mut self, decision: &Decision, log: &GameLog, rng: &mut Rng) -> Value;
    fn end_game(&mut self, _end: &GameEnd, _log: &GameLog) {}
}

/// A seeded generator (splitmix64): the same in the C, C++, Go and Rust kits.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// Seeded from "seed:game_id:seat" (FNV-1a), as every sample bot is at a game's start.
    pub fn for_game(seed: u64, game_id: &str, seat: i64) -> Self {
        let text = format!("{seed}:{game_id}:{seat}");
        let hash = text.bytes().fold(0xcbf29ce484222325u64, |hash, byte| (hash ^ byte as u64).wrapping_mul(0x100000001b3));
        Rng::new(hash)
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in [0, bound) without modulo bias (bound > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        let limit = u64::MAX - u64::MAX % bound;
        loop {
            let value = self.next();
            if value < limit {
                return value % bound;
            }
        }
    }

    /// A uniform integer in [low, high].
    pub fn between(&mut self, low: i64, high: i64) -> i64 {
        low.wrapping_add(self.below(high.wrapping_sub(low) as u64 + 1) as i64)
    }
}

/// The bounds of a legal-entry value offering an inclusive integer range: exactly {"min": a, "max": b}.
pub fn range(value: &Value) -> Option<(i64, i64)> {
    match value {
        Value::Map(map) if map.len() == 2 => Some((map.get("min")?.as_int()?, map.get("max")?.as_int()?)),
        _ => None,
    }
}

/// `entry` with `key` set to `value` (to answer a range with your own choice).
pub fn with_int(entry: &Value, key: &str, value: i64) -> Value {
    let mut answer = entry.clone();
    if let Value::Map(map) = &mut answer {
        map.insert(key.to_string(), Value::Int(value));
    }
    answer
}

/// `entry` with a random integer drawn inside every range it gives (in key order).
pub fn fill_ranges(entry: &Value, rng: &mut Rng) -> Value {
    let mut answer = entry.clone();
    if let Value::Map(map) = &mut answer {
        for value in map.values_mut() {
            if let Some((low, high)) = range(value) {
                *value = Value::Int(rng.between(low, high));
            }
        }
    }
    answer
}

/// A uniformly random legal entry with every range filled: always a legal answer.
pub fn random_action(legal: &[Value], rng: &mut Rng) -> Value {
    fill_ranges(&legal[rng.below(legal.len() as u64) as usize], rng)
}

/// Which game's cards a [`Card`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deck {
    /// Knock Rummy, Casino: "AS", "10D", "QH".
    French,
    /// Cuajo: "Ko", "Jc", "3b".
    Spanish,
    /// Quitlok: "Q1" .. "Q12".
    Quitlok,
}

/// A card in the protocol's notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Card {
    pub deck: Deck,
    /// French A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12.
    pub rank: u8,
    /// 'C' 'D' 'H' 'S'; 'o' 'c' 'e' 'b'; None for Quitlok.
    pub suit: Option<char>,
}

/// The card a string names in any game, or None.
pub fn parse_card(text: &str) -> Option<Card> {
    const FRENCH: [&str; 13] = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
    const SPANISH: [(&str, u8); 7] = [("A", 1), ("3", 3), ("4", 4), ("5", 5), ("J", 10), ("H", 11), ("K", 12)];
    if let Some(number) = text.strip_prefix('Q') {
        if let Ok(rank @ 1..=12) = number.parse::<u8>() {
            if number == rank.to_string() {
                return Some(Card { deck: Deck::Quitlok, rank, suit: None });
            }
        }
    }
    let suit = text.chars().last()?;
    let rank = &text[..text.len() - suit.len_utf8()];
    if "CDHS".contains(suit) {
        let index = FRENCH.iter().position(|name| *name == rank)?;
        return Some(Card { deck: Deck::French, rank: index as u8 + 1, suit: Some(suit) });
    }
    if "oceb".contains(suit) {
        let (_, number) = SPANISH.iter().find(|(name, _)| *name == rank)?;
        return Some(Card { deck: Deck::Spanish, rank: *number, suit: Some(suit) });
    }
    None
}

/// The next frame's body, or None at a clean end of input.
pub fn read_frame(input: &mut impl Read) -> Result<Option<Vec<u8>>, Error> {
    let mut header = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match input.read(&mut header[got..])? {
            0 if got == 0 => return Ok(None),
            0 => return Err(Error::Protocol("input ended inside a frame header".into())),
            count => got += count,
        }
    }
    let length = u32::from_be_bytes(header) as usize;
    if length > MAX_READ_FRAME {
        return Err(Error::Protocol(format!("a frame of {length} bytes from the referee is too large")));
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body).map_err(|_| Error::Protocol("input ended inside a frame".into()))?;
    Ok(Some(body))
}

fn write_reply(output: &mut impl Write, reply: &Reply) -> Result<(), Error> {
    let body = rmp_serde::to_vec_named(reply).map_err(|error| Error::Protocol(error.to_string()))?;
    if body.len() > MAX_SEND_FRAME {
        return Err(Error::Protocol(format!("a frame of {} bytes is over the referee's limit of {MAX_SEND_FRAME}", body.len())));
    }
    output.write_all(&(body.len() as u32).to_be_bytes())?;
    output.write_all(&body)?;
    output.flush()?;
    Ok(())
}

/// Speaks the protocol on the given streams until shutdown or end of input.
pub fn serve(bot: &mut impl Bot, seed: u64, input: &mut impl Read, output: &mut impl Write) -> Result<(), Error> {
    let mut rng = Rng::new(seed);
    let mut log = GameLog::default();
    while let Some(body) = read_frame(input)? {
        let message: Message = rmp_serde::from_slice(&body)
            .map_err(|error| Error::Protocol(format!("a message the protocol does not allow: {error}")))?;
        match message {
            Message::Hello { .. } => {
                write_reply(output, &Reply::Hello { protocol: PROTOCOL_VERSION, name: bot.name(), version: bot.version() })?
            }
            Message::GameStart(start) => {
                rng = Rng::for_game(seed, &start.game_id, start.seat);
                bot.start_game(&start);
                log = GameLog { start: Some(start), events: Vec::new() };
            }
            Message::Decision(decision) => {
                if decision.legal.is_empty() {
                    return Err(Error::Protocol("a decision without legal actions".into()));
                }
                log.events.extend(decision.events.iter().cloned());
                let action = bot.decide(&decision, &log, &mut rng);
                write_reply(output, &Reply::Action { decision: decision.number, action: &action })?;
            }
            Message::GameEnd(end) => {
                log.events.extend(end.events.iter().cloned());
                bot.end_game(&end, &log);
            }
            Message::Shutdown => return Ok(()),
        }
    }
    Ok(())
}

/// Runs `bot` on this process's stdin and stdout.
pub fn run(bot: &mut impl Bot, seed: u64) -> Result<(), Error> {
    let stdin = io::stdin();
    let stdout = io::stdout();
    serve(bot, seed, &mut io::BufReader::new(stdin.lock()), &mut io::BufWriter::new(stdout.lock()))
}

/// The seed of "[--seed N]" (the arguments after the program name).
pub fn parse_seed_args(mut args: impl Iterator<Item = String>) -> Result<u64, String> {
    let usage = || "usage: bot [--seed N]".to_string();
    match (args.next(), args.next(), args.next()) {
        (None, _, _) => Ok(0),
        (Some(flag), Some(seed), None) if flag == "--seed" => seed.parse().map_err(|_| usage()),
        _ => Err(usage()),
    }
}
