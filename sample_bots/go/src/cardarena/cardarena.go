// Package cardarena is a small library for cardarena bots (protocol/PROTOCOL.md, version 1).
//
// It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
// game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
// implements Decide. github.com/vmihailenco/msgpack/v5 (Debian:
// golang-github-vmihailenco-msgpack.v5-dev) decodes and encodes: messages are plain maps, slices,
// strings, int64s and bools, never bin nor extension types. stdout carries frames only: log to
// stderr.
package cardarena

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// ProtocolVersion is the protocol this library speaks.
const ProtocolVersion = 1

// MaxSendFrame is the largest frame the referee accepts (a larger one is an oversize fault).
const MaxSendFrame = 1 << 20

// MaxReadFrame is the largest frame read from the referee: anything larger is a broken stream.
const MaxReadFrame = 64 << 20

// Action is one action: a legal entry, or an answer built from one.
type Action = map[string]any

// GameStart announces a game: the seat is yours.
type GameStart struct {
	GameID       string         `msgpack:"game_id"`
	Game         string         `msgpack:"game"`
	RulesVersion string         `msgpack:"rules_version"`
	Seat         int64          `msgpack:"seat"`
	Players      int64          `msgpack:"players"`
	Names        []string       `msgpack:"names"`
	Teams        []int64        `msgpack:"teams"`
	Options      map[string]any `msgpack:"options"`
}

// Decision asks for one action; Log holds the game's public events so far, these included.
type Decision struct {
	GameID string           `msgpack:"game_id"`
	Number int64            `msgpack:"decision"`
	Seat   int64            `msgpack:"seat"`
	View   map[string]any   `msgpack:"view"`
	Events []map[string]any `msgpack:"events"`
	Legal  []Action         `msgpack:"legal"`
	TimeMS int64            `msgpack:"time_ms"` // the limit per decision
	BankMS int64            `msgpack:"bank_ms"` // what is left of the seat's time bank in this game (PROTOCOL.md § 5)
	Log    *GameLog         `msgpack:"-"`
}

// GameEnd closes a game with its result and what is revealed to everyone.
type GameEnd struct {
	GameID string           `msgpack:"game_id"`
	Result map[string]any   `msgpack:"result"`
	Reveal map[string]any   `msgpack:"reveal"`
	Events []map[string]any `msgpack:"events"`
	Faults []map[string]any `msgpack:"faults"`
}

// GameLog keeps the current game's start and public events, oldest first.
type GameLog struct {
	Start  GameStart
	Events []map[string]any
}

// Bot decides; implement GameStarter and GameEnder as well to follow the games.
type Bot interface {
	Decide(decision *Decision, rng *Rng) (Action, error)
}

// GameStarter is a Bot that wants each game_start.
type GameStarter interface {
	StartGame(start *GameStart)
}

// GameEnder is a Bot that wants each game_end, with the game's whole log.
type GameEnder interface {
	EndGame(end *GameEnd, log *GameLog)
}

// Rng is a seeded generator (splitmix64): the same in the C, C++, Go and Rust kits.
type Rng struct{ state uint64 }

// NewGameRng seeds from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start.
func NewGameRng(seed uint64, gameID string, seat int64) *Rng {
	hash := uint64(0xcbf29ce484222325)
	for _, b := range []byte(fmt.Sprintf("%d:%s:%d", seed, gameID, seat)) {
		hash = (hash ^ uint64(b)) * 0x100000001b3
	}
	return &Rng{hash}
}

func (r *Rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Below is a uniform integer in [0, bound) without modulo bias (bound > 0).
func (r *Rng) Below(bound uint64) uint64 {
	limit := ^uint64(0) - ^uint64(0)%bound
	for {
		if value := r.next(); value < limit {
			return value % bound
		}
	}
}

// Between is a uniform integer in [low, high].
func (r *Rng) Between(low, high int64) int64 {
	return low + int64(r.Below(uint64(high-low)+1))
}

// Range returns the bounds of a legal-entry value that offers an inclusive integer range,
// exactly {"min": a, "max": b}; ok is false for any other value.
func Range(value any) (low, high int64, ok bool) {
	bounds, isMap := value.(map[string]any)
	if !isMap || len(bounds) != 2 {
		return 0, 0, false
	}
	low, lowOK := Int(bounds["min"])
	high, highOK := Int(bounds["max"])
	return low, high, lowOK && highOK
}

// Int reads a decoded integer (msgpack's unsigned encodings decode as uint64, the others as int64).
func Int(value any) (int64, bool) {
	switch number := value.(type) {
	case int64:
		return number, true
	case uint64:
		return int64(number), number <= math.MaxInt64
	}
	return 0, false
}

// WithInt is a copy of entry with key set to value (to answer a range with your own choice).
func WithInt(entry Action, key string, value int64) Action {
	answer := copyAction(entry)
	answer[key] = value
	return answer
}

func copyAction(entry Action) Action {
	answer := make(Action, len(entry))
	for key, value := range entry {
		answer[key] = value
	}
	return answer
}

// FillRanges is a copy of entry with a random integer drawn inside every range it gives (in key
// order, so that a seeded bot replays exactly).
func FillRanges(entry Action, rng *Rng) Action {
	answer := copyAction(entry)
	keys := make([]string, 0, len(entry))
	for key := range entry {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if low, high, ok := Range(entry[key]); ok {
			answer[key] = rng.Between(low, high)
		}
	}
	return answer
}

// RandomAction is a uniformly random legal entry with every range filled: always a legal answer.
func RandomAction(legal []Action, rng *Rng) Action {
	return FillRanges(legal[rng.Below(uint64(len(legal)))], rng)
}

// Deck says which game's cards a Card belongs to.
type Deck int

const (
	French  Deck = iota // Knock Rummy, Casino: "AS", "10D", "QH"
	Spanish             // Cuajo: "Ko", "Jc", "3b"
	Quitlok             // Quitlok: "Q1" .. "Q12"
)

// Card is a card in the protocol's notation.
type Card struct {
	Deck Deck
	Rank int  // French A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12
	Suit byte // 'C' 'D' 'H' 'S'; 'o' 'c' 'e' 'b'; 0 for Quitlok
}

var frenchRanks = map[string]int{"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
	"10": 10, "J": 11, "Q": 12, "K": 13}
var spanishRanks = map[string]int{"A": 1, "3": 3, "4": 4, "5": 5, "J": 10, "H": 11, "K": 12}

// ParseCard reads a card string of any game.
func ParseCard(text string) (Card, error) {
	if strings.HasPrefix(text, "Q") {
		if n, err := strconv.Atoi(text[1:]); err == nil && n >= 1 && n <= 12 && text[1:] == strconv.Itoa(n) {
			return Card{Quitlok, n, 0}, nil
		}
	}
	if len(text) >= 2 {
		rank, suit := text[:len(text)-1], text[len(text)-1]
		if n, ok := frenchRanks[rank]; ok && strings.IndexByte("CDHS", suit) >= 0 {
			return Card{French, n, suit}, nil
		}
		if n, ok := spanishRanks[rank]; ok && strings.IndexByte("oceb", suit) >= 0 {
			return Card{Spanish, n, suit}, nil
		}
	}
	return Card{}, fmt.Errorf("not a card: %q", text)
}

// Conn reads and writes frames.
type Conn struct {
	in  *bufio.Reader
	out *bufio.Writer
}

// NewConn speaks the protocol over the given streams.
func NewConn(in io.Reader, out io.Writer) *Conn {
	return &Conn{bufio.NewReader(in), bufio.NewWriter(out)}
}

// ReadFrame is the next frame's body; io.EOF at a clean end of input.
func (c *Conn) ReadFrame() ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(c.in, header[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("input ended inside a frame header: %w", err)
	}
	length := binary.BigEndian.Uint32(header[:])
	if length > MaxReadFrame {
		return nil, fmt.Errorf("a frame of %d bytes from the referee is too large", length)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.in, body); err != nil {
		return nil, fmt.Errorf("input ended inside a frame: %w", err)
	}
	return body, nil
}

// Decode reads a frame body into a typed message (unknown keys ignored; in maps and slices of
// `any`, integers are int64 or uint64: read them with Int).
func Decode(body []byte, into any) error {
	decoder := msgpack.NewDecoder(bytes.NewReader(body))
	decoder.UseLooseInterfaceDecoding(true)
	if err := decoder.Decode(into); err != nil {
		return fmt.Errorf("a frame that is not the expected msgpack map: %w", err)
	}
	return nil
}

// WriteMessage sends one message as a frame and flushes.
func (c *Conn) WriteMessage(message map[string]any) error {
	body, err := msgpack.Marshal(message)
	if err != nil {
		return err
	}
	if len(body) > MaxSendFrame {
		return fmt.Errorf("a frame of %d bytes is over the referee's limit of %d", len(body), MaxSendFrame)
	}
	var header [4]byte
	binary.BigEndian.PutUint32(header[:], uint32(len(body)))
	if _, err := c.out.Write(header[:]); err != nil {
		return err
	}
	if _, err := c.out.Write(body); err != nil {
		return err
	}
	return c.out.Flush()
}

// Serve speaks the protocol until shutdown or end of input.
func Serve(bot Bot, name, version string, seed uint64, conn *Conn) error {
	rng := &Rng{seed}
	log := &GameLog{}
	for {
		body, err := conn.ReadFrame()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		var header struct {
			Type string `msgpack:"type"`
		}
		if err := Decode(body, &header); err != nil {
			return err
		}
		switch header.Type {
		case "hello":
			err = conn.WriteMessage(map[string]any{"type": "hello", "protocol": ProtocolVersion, "name": name, "version": version})
		case "game_start":
			log = &GameLog{}
			if err = Decode(body, &log.Start); err == nil {
				rng = NewGameRng(seed, log.Start.GameID, log.Start.Seat)
				if starter, ok := bot.(GameStarter); ok {
					starter.StartGame(&log.Start)
				}
			}
		case "decision":
			err = decide(bot, body, log, rng, conn)
		case "game_end":
			var end GameEnd
			if err = Decode(body, &end); err == nil {
				log.Events = append(log.Events, end.Events...)
				if ender, ok := bot.(GameEnder); ok {
					ender.EndGame(&end, log)
				}
			}
		case "shutdown":
			return nil
		default:
			err = fmt.Errorf("unknown message type %q from the referee", header.Type)
		}
		if err != nil {
			return err
		}
	}
}

func decide(bot Bot, body []byte, log *GameLog, rng *Rng, conn *Conn) error {
	decision := &Decision{Log: log}
	if err := Decode(body, decision); err != nil {
		return err
	}
	if len(decision.Legal) == 0 {
		return errors.New("a decision without legal actions")
	}
	log.Events = append(log.Events, decision.Events...)
	action, err := bot.Decide(decision, rng)
	if err != nil {
		return fmt.Errorf("decision %d: %w", decision.Number, err)
	}
	return conn.WriteMessage(map[string]any{"type": "action", "decision": decision.Number, "action": action})
}

// ParseSeedArgs reads "[--seed N]" from the command-line arguments after the program name.
func ParseSeedArgs(args []string) (uint64, error) {
	if len(args) == 0 {
		return 0, nil
	}
	if len(args) == 2 && args[0] == "--seed" {
		if seed, err := strconv.ParseUint(args[1], 10, 64); err == nil {
			return seed, nil
		}
	}
	return 0, errors.New("usage: bot [--seed N]")
}
