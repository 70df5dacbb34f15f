"""The bot SDK's old import name, `protocol`: importing it fails with the new name.

The referee puts this folder's parent on a bot's PYTHONPATH after the real SDK, so a bot written
for cardarena 0.1's `from protocol.bot import run` stops with a message that says what to write,
instead of a bare ModuleNotFoundError. A bot's own module named `protocol` still wins (its own
folder comes first on its path).
"""

raise ImportError("the cardarena bot SDK is now imported as `cardarena.protocol`: write "
                  "`from cardarena.protocol.bot import run` instead of `from protocol.bot import run`")
