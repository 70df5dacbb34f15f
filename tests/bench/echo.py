"""A plain echo child for the referee benchmark: every frame read is written back unchanged."""
import struct
import sys

inp, out = sys.stdin.buffer, sys.stdout.buffer
while header := inp.read(4):
    (length,) = struct.unpack(">I", header)
    out.write(header + inp.read(length))
    out.flush()
