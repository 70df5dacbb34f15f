import random

import zoo
from cardarena.protocol.actions import random_action
from cardarena.protocol.bot import write_message


def chatty(out, message):
    """Print a line of text on stdout (as a careless `print` would), then answer legally."""
    out.write(b"Thinking about decision %d...\n" % message["decision"])
    action = random_action(message["legal"], random.Random(0))
    write_message(out, {"type": "action", "decision": message["decision"], "action": action})


zoo.play(chatty)
