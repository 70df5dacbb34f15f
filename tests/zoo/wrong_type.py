from cardarena.protocol.bot import write_message
import zoo

zoo.play(lambda out, message: write_message(out, {"type": "hello", "protocol": 1, "name": "x", "version": "0"}))
