"""Plays patiently, then ignores `shutdown` and stays alive (until the referee kills it).

A fault at the match's shutdown (`crash`: it did not exit within the grace), after the last game;
no game's result changes.
"""
import time

import zoo

zoo.play(lambda out, message: zoo.answer_patiently(out, message))
time.sleep(3600)
