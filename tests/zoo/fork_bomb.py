import os
import time
import zoo


def bomb(out, message):
    started = 0
    try:
        while started < 10_000:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            started += 1
    except OSError as error:
        zoo.say(f"started {started} processes, then: {error}", status=1)
    zoo.say(f"started {started} processes unhindered")
    time.sleep(3600)


zoo.play(bomb)
