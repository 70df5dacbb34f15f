import struct
import zoo

BODY = b"\xc1\xc1 this is not msgpack \xff"


def garbage(out, message):
    out.write(struct.pack(">I", len(BODY)) + BODY)
    out.flush()


zoo.play(garbage)
