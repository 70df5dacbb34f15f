# frozen_string_literal: true

# cardarena.rb: a small library for cardarena bots in Ruby (protocol/PROTOCOL.md, version 1).
#
# It frames messages (a 4-byte big-endian length, then one msgpack map), shakes hands, runs the
# game loop and reseeds a random generator per game from (seed, game id, seat), so a bot only
# writes `decide`. msgpack comes from Debian's ruby-msgpack (or `gem install msgpack`).
#
# Warning: Ruby's msgpack packs a binary-encoded (ASCII-8BIT) String as `bin`, which the referee
# refuses (a malformed action). Strings from IO#read, String#b, Array#pack or a "\xff" literal are
# binary: this library re-encodes every String (and Symbol) it sends as UTF-8 str, and refuses one
# that is not valid UTF-8. stdout carries frames only: log to $stderr.
require "msgpack"

module Cardarena
  PROTOCOL_VERSION = 1
  MAX_SEND_FRAME = 1 << 20 # the referee refuses a larger frame (oversize fault)
  MAX_READ_FRAME = 64 << 20 # a larger frame from the referee means a broken stream
  MASK64 = (1 << 64) - 1

  # A protocol error: `run` prints its message as one line on $stderr and exits with 1.
  class ProtocolError < StandardError; end

  # A seeded generator (splitmix64): the same in every starter kit, so they replay alike.
  class Rng
    def initialize(state)
      @state = state & MASK64
    end

    # Seeded from "seed:game_id:seat" (FNV-1a), as every sample bot does at a game's start.
    def self.for_game(seed, game_id, seat)
      hash = 0xcbf29ce484222325
      "#{seed}:#{game_id}:#{seat}".each_byte { |byte| hash = ((hash ^ byte) * 0x100000001b3) & MASK64 }
      new(hash)
    end

    # The next 64-bit value.
    def next_u64
      @state = (@state + 0x9e3779b97f4a7c15) & MASK64
      z = @state
      z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
      z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK64
      z ^ (z >> 31)
    end

    # A uniform integer in [0, bound) without modulo bias (bound > 0).
    def below(bound)
      limit = MASK64 - (MASK64 % bound)
      loop do
        value = next_u64
        return value % bound if value < limit
      end
    end

    # A uniform integer in [low, high].
    def between(low, high)
      low + below(high - low + 1)
    end
  end

  # The bounds of a legal-entry value offering an inclusive integer range (exactly {"min", "max"}), or nil.
  def self.range(value)
    return nil unless value.is_a?(Hash) && value.size == 2
    low, high = value.values_at("min", "max")
    low.is_a?(Integer) && high.is_a?(Integer) ? low..high : nil
  end

  # A copy of `entry` with `key` set to `value` (to answer a range with your own choice).
  def self.with_int(entry, key, value)
    entry.merge(key.to_s => value)
  end

  # A copy of `entry` with a random integer drawn inside every range it gives (in the entry's order).
  def self.fill_ranges(entry, rng)
    entry.to_h do |key, value|
      bounds = range(value)
      [key, bounds ? rng.between(bounds.begin, bounds.end) : value]
    end
  end

  # A uniformly random legal entry with every range filled: always a legal answer.
  def self.random_action(legal, rng)
    fill_ranges(legal[rng.below(legal.size)], rng)
  end

  # A card in the protocol's notation: "10D" (Knock Rummy, Casino), "Ko" (Cuajo), "Q12" (Quitlok).
  # French ranks A=1..K=13; Spanish A=1, 3, 4, 5, J=10, H=11, K=12; Quitlok 1..12 (suit nil).
  Card = Struct.new(:deck, :rank, :suit)
  FRENCH_RANKS = %w[A 2 3 4 5 6 7 8 9 10 J Q K].each_with_index.to_h { |rank, i| [rank, i + 1] }.freeze
  SPANISH_RANKS = { "A" => 1, "3" => 3, "4" => 4, "5" => 5, "J" => 10, "H" => 11, "K" => 12 }.freeze

  # The Card `text` names, or nil when it is not a card of any game.
  def self.parse_card(text)
    return nil unless text.is_a?(String)
    return Card.new(:quitlok, Regexp.last_match(1).to_i, nil) if text =~ /\AQ([1-9]|1[0-2])\z/
    rank, suit = text[0...-1], text[-1]
    return Card.new(:french, FRENCH_RANKS[rank], suit) if FRENCH_RANKS.key?(rank) && "CDHS".include?(suit.to_s)
    return Card.new(:spanish, SPANISH_RANKS[rank], suit) if SPANISH_RANKS.key?(rank) && "oceb".include?(suit.to_s)
    nil
  end

  # The current game's start message and public events, oldest first.
  class GameLog
    attr_reader :start, :events

    def initialize(start = nil)
      @start = start
      @events = []
    end

    def add(events)
      @events.concat(events) if events.is_a?(Array)
    end
  end

  # A copy of `value` fit to send: every String and Symbol (keys included) as valid UTF-8, never binary.
  def self.wire(value)
    case value
    when Hash then value.to_h { |key, item| [wire(key), wire(item)] }
    when Array then value.map { |item| wire(item) }
    when Symbol then wire(value.to_s)
    when String
      text = value.encoding == Encoding::UTF_8 ? value : value.dup.force_encoding(Encoding::UTF_8)
      raise ProtocolError, "a string to send is not valid UTF-8: #{value.inspect}" unless text.valid_encoding?
      text
    else value
    end
  end

  # Reads and writes frames.
  class Connection
    def initialize(input = $stdin, output = $stdout)
      @input = input.binmode
      @output = output.binmode
    end

    # The next message (a Hash), or nil at a clean end of input.
    def read_message
      header = @input.read(4)
      return nil if header.nil?
      raise ProtocolError, "input ended inside a frame" if header.bytesize < 4
      length = header.unpack1("N")
      raise ProtocolError, "a frame of #{length} bytes from the referee is too large" if length > MAX_READ_FRAME
      body = @input.read(length) || "".b
      raise ProtocolError, "input ended inside a frame" if body.bytesize < length
      message = MessagePack.unpack(body)
      raise ProtocolError, "the referee sent a frame that is not one msgpack map" unless message.is_a?(Hash)
      message
    rescue MessagePack::MalformedFormatError, EOFError => e
      raise ProtocolError, "the referee sent a frame that is not one msgpack map: #{e.message}"
    end

    # Sends one message as a frame and flushes.
    def write_message(message)
      body = MessagePack.pack(Cardarena.wire(message))
      if body.bytesize > MAX_SEND_FRAME
        raise ProtocolError, "a frame of #{body.bytesize} bytes is over the referee's limit of #{MAX_SEND_FRAME}"
      end
      @output.write([body.bytesize].pack("N"), body)
      @output.flush
    end
  end

  # Parses "[--seed N]" (a 64-bit unsigned seed, default 0), exiting with the usage otherwise.
  def self.parse_seed_args(argv = ARGV)
    return 0 if argv.empty?
    return argv[1].to_i if argv.size == 2 && argv[0] == "--seed" && argv[1].match?(/\A\d+\z/) && argv[1].to_i <= MASK64
    warn "usage: ruby #{File.basename($PROGRAM_NAME)} [--seed N]"
    exit 2
  end

  # Plays until shutdown or end of input. `bot.decide(decision, log, rng)` returns one legal entry
  # with an integer inside every range; `start_game(start)` and `end_game(end, log)` are optional.
  def self.run(bot, name:, version: "1", seed: parse_seed_args, connection: Connection.new)
    serve(bot, name, version, seed, connection)
    exit 0
  rescue ProtocolError => e
    warn "cardarena: #{e.message}"
    exit 1
  end

  # The game loop: returns after shutdown or at the end of input.
  def self.serve(bot, name, version, seed, connection)
    rng = Rng.new(seed)
    log = GameLog.new
    while (message = connection.read_message)
      case message["type"]
      when "hello"
        connection.write_message({ "type" => "hello", "protocol" => PROTOCOL_VERSION, "name" => name, "version" => version })
      when "game_start"
        # Reseed per game, so a game's play does not depend on the games before it.
        rng = Rng.for_game(seed, message["game_id"], message["seat"].to_i)
        log = GameLog.new(message)
        bot.start_game(message) if bot.respond_to?(:start_game)
      when "decision"
        legal = message["legal"]
        raise ProtocolError, "a decision without a legal list" unless legal.is_a?(Array) && !legal.empty?
        log.add(message["events"])
        action = bot.decide(message, log, rng)
        connection.write_message({ "type" => "action", "decision" => message["decision"], "action" => action })
      when "game_end"
        log.add(message["events"])
        bot.end_game(message, log) if bot.respond_to?(:end_game)
      when "shutdown"
        return
      else
        raise ProtocolError, "unknown message type #{message['type'].inspect} from the referee"
      end
    end
  end
end
