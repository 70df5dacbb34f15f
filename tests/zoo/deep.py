import zoo


def deep(out, message):
    """An action with a 1,000-level nested list beside it."""
    zoo.send_raw(out, zoo.deep_frame({"type": "action", "decision": message["decision"], "action": {"type": "x"}}))


zoo.play(deep)
