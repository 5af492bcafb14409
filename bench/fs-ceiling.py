#!/usr/bin/env python3
"""How many durable file replacements per second this machine's filesystem
allows, with nothing else around them: the ceiling under `cargo bench --bench
docs_throughput`, which does the same file work plus the history's commit.

Usage: bench/fs-ceiling.py [--writers 8] [--replacements 400] [--runs 3] [--dir /tmp]

Each writer replaces its own document in one shared folder (as the bench's
writers do), the way the hub publishes a patch: a new temporary file written
and fsynced, renamed over the document, the folder fsynced. Shown with and
without the folder's fsync, and with the replaced file held open across the
rename and closed on another thread (what the hub does, so that freeing it is
off the writer's path). Prints the median of --runs runs; loopback files only,
in a temporary folder removed at the end.

Two more cases measure a design the hub does not use: each writer keeps
a spare file beside its document, writes the new content into the spare,
fsyncs it, swaps the two names in one atomic step (renameat2 with
RENAME_EXCHANGE) and fsyncs the folder; the spare then holds the old content
and is written again by the next replacement, either truncated first or
rewritten in place. No inode is made or freed per replacement, and in place
no data block either. A throwaway hub build publishing that way gained about
15 % (2026-12-05; not kept: two processes recovering the same write cannot
both finish it safely).
"""
import argparse, ctypes, os, queue, statistics, tempfile, threading, time

SIZE = 4096


def replace(folder, writer, count, sync_folder, closer):
    target = os.path.join(folder, f"w{writer}.md")
    with open(target, "wb") as f:
        f.write(b"x" * SIZE)
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for n in range(count):
            temp = os.path.join(folder, f".w{writer}.{n}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"y" * SIZE)
            os.fsync(fd)
            os.close(fd)
            held = os.open(target, os.O_PATH | os.O_NOFOLLOW) if closer else None
            os.rename(temp, target)
            if held is not None:
                closer.put(held)
            if sync_folder:
                os.fsync(folder_fd)
    finally:
        os.close(folder_fd)


RENAME_EXCHANGE = 2
AT_FDCWD = -100
LIBC = ctypes.CDLL(None, use_errno=True)


def swap(first, second):
    if LIBC.renameat2(AT_FDCWD, first.encode(), AT_FDCWD, second.encode(), RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), first)


def swap_in(folder, writer, count, in_place):
    target = os.path.join(folder, f"w{writer}.md")
    spare = os.path.join(folder, f".w{writer}.spare")
    for name in (target, spare):
        with open(name, "wb") as f:
            f.write(b"x" * SIZE)
            os.fsync(f.fileno())
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(count):
            fd = os.open(spare, os.O_WRONLY | (0 if in_place else os.O_TRUNC))
            os.pwrite(fd, b"y" * SIZE, 0)
            os.fsync(fd)
            os.close(fd)
            swap(spare, target)
            os.fsync(folder_fd)
    finally:
        os.close(folder_fd)


def run(base, writers, count, sync_folder, hold, swapping=None):
    folder = tempfile.mkdtemp(dir=base)
    closer = queue.Queue() if hold else None
    closing = None
    if hold:
        def close_all():
            while (fd := closer.get()) is not None:
                os.close(fd)
        closing = threading.Thread(target=close_all)
        closing.start()
    if swapping is None:
        threads = [threading.Thread(target=replace, args=(folder, w, count, sync_folder, closer)) for w in range(writers)]
    else:
        threads = [threading.Thread(target=swap_in, args=(folder, w, count, swapping == "in place")) for w in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if closing:
        closer.put(None)
        closing.join()
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    os.rmdir(folder)
    return writers * count / seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--replacements", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()
    cases = [
        ("temp file + fsync + rename + folder fsync", True, False),
        ("  the same, replaced file closed on another thread", True, True),
        ("temp file + fsync + rename (no folder fsync)", False, False),
        ("spare truncated, written, fsync, swapped + folder fsync", True, False, "truncated"),
        ("spare rewritten in place, fsync, swapped + folder fsync", True, False, "in place"),
    ]
    results = {case[0]: [] for case in cases}
    for _ in range(args.runs):
        # the cases take turns, so the drift of a shared machine falls on all alike
        for name, *how in cases:
            results[name].append(run(args.dir, args.writers, args.replacements, *how))
    print(f"{args.writers} writers x {args.replacements} replacements of {SIZE}-byte files in one folder, median of {args.runs}:")
    for name, rates in results.items():
        print(f"  {name:<56} {statistics.median(rates):8.0f} /s")


if __name__ == "__main__":
    main()
