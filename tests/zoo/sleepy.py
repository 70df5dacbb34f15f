import time
import zoo

zoo.play(lambda out, message: time.sleep(3600))
