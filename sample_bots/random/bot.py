"""A bot that plays a uniformly random legal action in any game (seeded: reproducible play).

Usage: python bot.py [--seed N]
"""

from cardarena.protocol.bot import RandomBot, run, seed_argument

if __name__ == "__main__":
    run(RandomBot(seed_argument()))
