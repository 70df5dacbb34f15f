"""A bot that plays a uniformly random legal action in any game (seeded: reproducible play).

Usage: python bot.py [--seed N]
"""

import argparse

from cardarena.protocol.bot import RandomBot, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's choices (default 0)")
    args = parser.parse_args()
    run(RandomBot(args.seed))


if __name__ == "__main__":
    main()
