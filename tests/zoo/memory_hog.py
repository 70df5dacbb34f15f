import zoo


def grow(out, message):
    hoard = []
    while True:
        hoard.append(bytearray(8 << 20))  # zero-filled: every page touched
        zoo.say(f"holding {len(hoard) * 8} MiB")


zoo.play(grow)
