#!/usr/bin/env python3
"""How many durable file replacements per second this machine's filesystem
allows, with nothing else around them: the ceiling under `cargo bench --bench
docs_throughput`, which does the same file work plus the history's commit.

Usage: scripts/fs-ceiling.py [--writers 8] [--replacements 400] [--runs 3] [--dir /tmp]

Each writer replaces its own document in one shared folder (as the bench's
writers do), the way the hub publishes a patch: a new temporary file written
and fsynced, renamed over the document, the folder fsynced. Shown with and
without the folder's fsync, and with the replaced file held open across the
rename and closed on another thread (what the hub does, so that freeing it is
off the writer's path). Prints the median of --runs runs; loopback files only,
in a temporary folder removed at the end.
"""
import argparse, os, queue, statistics, tempfile, threading, time

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


def run(base, writers, count, sync_folder, hold):
    folder = tempfile.mkdtemp(dir=base)
    closer = queue.Queue() if hold else None
    closing = None
    if hold:
        def close_all():
            while (fd := closer.get()) is not None:
                os.close(fd)
        closing = threading.Thread(target=close_all)
        closing.start()
    threads = [threading.Thread(target=replace, args=(folder, w, count, sync_folder, closer)) for w in range(writers)]
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
    ]
    results = {name: [] for name, _, _ in cases}
    for _ in range(args.runs):
        # the cases take turns, so the drift of a shared machine falls on all alike
        for name, sync_folder, hold in cases:
            results[name].append(run(args.dir, args.writers, args.replacements, sync_folder, hold))
    print(f"{args.writers} writers x {args.replacements} replacements of {SIZE}-byte files in one folder, median of {args.runs}:")
    for name, rates in results.items():
        print(f"  {name:<52} {statistics.median(rates):8.0f} /s")


if __name__ == "__main__":
    main()
