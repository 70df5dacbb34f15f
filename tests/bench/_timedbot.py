import sys, time, os
from cardarena.protocol import bot as B
pt = time.thread_time
acc = {"decode": 0.0, "raw": 0.0, "rawn": 0, "read": 0.0, "handle": 0.0, "n": 0, "msgs": 0}
orig_read = B.read_message
def read_message(stream):
    t = pt(); m = orig_read(stream); acc["read"] += pt() - t; acc["msgs"] += 1; return m
B.read_message = read_message
orig_decode = B.decode_body
def decode_body(body, budget=True):
    t = pt(); m = orig_decode(body, budget); acc["decode"] += pt() - t; return m
B.decode_body = decode_body
import io
class Raw(io.RawIOBase):
    def __init__(s, fd): s.fd = fd
    def readable(s): return True
    def readinto(s, b):
        t = pt(); d = os.readv(s.fd, [b]); acc["raw"] += pt() - t; acc["rawn"] += 1; return d

orig_write = B.write_message
def write_message(stream, message):
    t = pt(); orig_write(stream, message); acc["handle"] += pt() - t; acc["n"] += 1
B.write_message = write_message
t0 = pt()
try:
    inp = io.BufferedReader(Raw(0)); out = sys.stdout.buffer; sys.stdout = sys.stderr
    B.serve(B.RandomBot(int(sys.argv[1])), inp, out)
finally:
    total = pt() - t0
    n = max(acc["n"], 1)
    sys.stderr.write(f"TIMING decisions {n} msgs {acc['msgs']} total {total/n*1e6:.1f} us/dec read {acc['read']/n*1e6:.1f} write {acc['handle']/n*1e6:.1f} decode {acc['decode']/n*1e6:.1f} raw {acc['raw']/n*1e6:.1f} rawn {acc['rawn']/n:.2f}\n")
