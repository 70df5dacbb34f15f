import random

import zoo
from cardarena.protocol.actions import is_range, random_action
from cardarena.protocol.bot import write_message


def out_of_range(out, message):
    """Answer a legal entry that offers a range with one more than its maximum (any entry when none does)."""
    ranged = [entry for entry in message["legal"] if any(is_range(value) for value in entry.values())]
    if not ranged:
        action = random_action(message["legal"], random.Random(0))
    else:
        action = {key: value["max"] + 1 if is_range(value) else value for key, value in ranged[0].items()}
    write_message(out, {"type": "action", "decision": message["decision"], "action": action})


zoo.play(out_of_range)
