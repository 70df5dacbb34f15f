"""Forks one child that spins (`while True: pass`) for as long as the bot runs, then plays legally,
writing at each decision how much CPU the child has had, when the decision reaches it (`child cpu
SECONDS` on stderr) and as it answers (`child cpu-at-answer SECONDS`): it must not slow the opponent
that shares its core, nor run while that opponent decides (between an answer and the next request)."""
import os
import sys

import zoo

child = os.fork()
if child == 0:
    while True:
        pass


def child_cpu_seconds():
    with open(f"/proc/{child}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def report_then_answer(out, message):
    zoo.say(f"child cpu {child_cpu_seconds():.3f}")
    zoo.say(f"child cpu-at-answer {child_cpu_seconds():.3f}")
    zoo.answer_patiently(out, message)


zoo.play(report_then_answer)
