import os
import zoo


def fill(out, message):
    written = 0
    try:
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "filler"), "wb") as handle:
            while written < 1 << 30:
                handle.write(b"x" * (1 << 20))
                handle.flush()
                written += 1 << 20
    except OSError as error:
        zoo.say(f"wrote {written >> 20} MiB, then: {error}", status=1)
    zoo.say(f"wrote {written >> 20} MiB unhindered", status=0)


zoo.play(fill)
