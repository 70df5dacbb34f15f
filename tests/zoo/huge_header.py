import struct
import time
import zoo


def huge(out, message):
    out.write(struct.pack(">I", 2 << 30) + b"\x81")
    out.flush()
    time.sleep(3600)


zoo.play(huge)
