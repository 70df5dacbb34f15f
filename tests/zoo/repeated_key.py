import zoo
from cardarena.protocol.framing import HEADER, encode


def repeated(out, message):
    """{"decision": -7, "type": "action", "action": <first legal entry>, "decision": N}: the last
    "decision" would win if repeated keys were read silently."""
    body = encode({"decision": -7, "type": "action", "action": message["legal"][0]})[4:]
    body = bytes([body[0] + 1]) + body[1:] + encode({"decision": message["decision"]})[5:]
    zoo.send_raw(out, HEADER.pack(len(body)) + body)


zoo.play(repeated)
