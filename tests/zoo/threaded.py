"""Before its hello, uses every kind of wait a bot's threads and processes might: threads handing
work over through a Condition and joined, a C thread joined with pthread_join (which waits on a
shared futex, the kernel's wake at a thread's exit being a shared one), and Python's
multiprocessing (a Lock, a Queue and a Pool, on process-shared semaphores); reports on stderr how
long each took, `threaded threads=WALL/CPU pthread_join=WALL/CPU multiprocessing=WALL/CPU` (seconds), then plays
patiently (`tests/test_channels.py`: under the sandbox's seccomp filter, shared futex waits poll
instead of sleeping; this shows what still works)."""

import ctypes
import multiprocessing
import threading
import time

import zoo

LIBC = ctypes.CDLL(None, use_errno=True)
THREAD_START = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


def timed(work):
    """`work()`'s wall-clock and CPU seconds (this process's, all threads), as WALL/CPU."""
    started, cpu = time.monotonic(), time.process_time()
    work()
    return f"{time.monotonic() - started:.2f}/{time.process_time() - cpu:.2f}"


def threads_with_a_condition():
    """Four workers take numbers from a list under a Condition; the sum proves every one was seen."""
    condition, work, done = threading.Condition(), [], []

    def worker():
        with condition:
            while True:
                condition.wait_for(lambda: work)
                number = work.pop()
                if number is None:
                    return
                done.append(number)

    workers = [threading.Thread(target=worker) for _ in range(4)]
    for thread in workers:
        thread.start()
    for number in [*range(1000), None, None, None, None]:
        with condition:
            work.insert(0, number)
            condition.notify()
    for thread in workers:
        thread.join()
    assert sorted(done) == list(range(1000)), "the workers lost numbers"


def pthread_join_of_a_busy_thread():
    """A C thread that sleeps 0.3 s, joined while it sleeps."""
    start = THREAD_START(lambda argument: time.sleep(0.3))
    thread = ctypes.c_ulong()
    assert LIBC.pthread_create(ctypes.byref(thread), None, start, None) == 0
    assert LIBC.pthread_join(thread, None) == 0


def square(number):
    return number * number


def counted(lock, queue):
    with lock:
        queue.put("child")


def process_shared_locks():
    """A Lock and a Queue shared with a child process, then a Pool of two."""
    lock, queue = multiprocessing.Lock(), multiprocessing.Queue()
    with lock:
        child = multiprocessing.Process(target=counted, args=(lock, queue))
        child.start()
        time.sleep(0.1)  # the child waits on the lock this process holds
    assert queue.get(timeout=30) == "child"
    child.join(30)
    with multiprocessing.Pool(2) as pool:
        assert pool.map(square, range(100)) == [number * number for number in range(100)]


if __name__ == "__main__":
    zoo.say(f"threaded threads={timed(threads_with_a_condition)} "
            f"pthread_join={timed(pthread_join_of_a_busy_thread)} "
            f"multiprocessing={timed(process_shared_locks)}")
    zoo.play(lambda out, message: None)
