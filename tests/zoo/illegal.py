from cardarena.protocol.bot import write_message
import zoo


def illegal(out, message):
    """Answer with the first legal entry's type but impossible field values."""
    entry = message["legal"][0]
    action = {key: ("ZZ" if key != "type" else value) for key, value in entry.items()}
    if len(action) == 1:
        action["card"] = "ZZ"
    write_message(out, {"type": "action", "decision": message["decision"], "action": action})


zoo.play(illegal)
