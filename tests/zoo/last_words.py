import zoo


def leave(out, message):
    zoo.say("last words: no card left to play", status=4)


zoo.play(leave)
