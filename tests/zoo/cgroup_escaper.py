"""Forks one spinning child, then at every decision tries to get it (or itself) out of the freezer
through any cgroup file system it can see (v1 or v2): thaw its own cgroup, move the child to its
cgroup's parent or to the hierarchy's root, make a cgroup of its own inside. Each success is a line
`ESCAPED <what>` on stderr; at the end of each decision `cgroup tries N refused M`. It then plays
legally."""
import errno
import os

import zoo

child = os.fork()
if child == 0:
    while True:
        pass


def cgroup_mounts():
    """The mount points of every cgroup (v1) and cgroup2 file system in sight."""
    found = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            kind = fields[fields.index("-") + 1]
            if kind in ("cgroup", "cgroup2"):
                found.append(fields[4])
    return found


def own_cgroups(mount, depth=4):
    """The folders under `mount` whose process list holds this process."""
    me, found, waiting = str(os.getpid()), [], [(mount, 0)]
    while waiting:
        folder, level = waiting.pop()
        for listing in ("cgroup.procs", "tasks"):
            try:
                with open(os.path.join(folder, listing)) as listed:
                    if me in listed.read().split():
                        found.append(folder)
                        break
            except OSError:
                continue
        if level < depth:
            try:
                waiting += [(entry.path, level + 1) for entry in os.scandir(folder) if entry.is_dir()]
            except OSError:
                continue
    return found


def attempt(path, data, what, counts):
    """Write `data` to `path` (or make the folder `path` when data is None); count a refusal."""
    counts[0] += 1
    try:
        if data is None:
            os.mkdir(path)
            os.rmdir(path)
        else:
            with open(path, "w") as target:
                target.write(data)
    except OSError as error:
        if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.EBUSY, errno.EINVAL):
            counts[1] += 1
            return
        zoo.say(f"cgroup {what}: unexpected {error}")
        counts[1] += 1
        return
    zoo.say(f"ESCAPED {what} ({path})")


def try_to_escape(out, message):
    counts = [0, 0]
    for mount in cgroup_mounts():
        for own in own_cgroups(mount):
            attempt(os.path.join(own, "freezer.state"), "THAWED", "thawed its v1 freezer", counts)
            attempt(os.path.join(own, "cgroup.freeze"), "0", "thawed its v2 cgroup", counts)
            attempt(os.path.join(own, "cgroup-escape"), None, "made a cgroup inside its own", counts)
            for target in {os.path.dirname(own) if own != mount else mount, mount}:
                for listing in ("tasks", "cgroup.procs"):
                    attempt(os.path.join(target, listing), str(child), f"moved its child to {target}", counts)
    zoo.say(f"cgroup tries {counts[0]} refused {counts[1]}")
    zoo.answer_patiently(out, message)


zoo.play(try_to_escape)
