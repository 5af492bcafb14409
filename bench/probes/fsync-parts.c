/*
 * What each part of a new file's durable replacement costs on the disk under
 * a folder (loopback only; no hub involved), so that the flushes of a
 * document write can be told apart. Each round creates a 2.6 KB temporary
 * file and times, in turn: writing its data out (sync_file_range, no flush,
 * no inode); the fsync after that (what else the filesystem writes for a
 * new file, its inode first, then the device flush); an fsync of a file
 * with nothing to write (the flush alone); the close and rename over the
 * document; and the folder's fsync. Medians and p90 in microseconds.
 *
 *   cc -O2 -o /tmp/fsync-parts bench/probes/fsync-parts.c
 *   /tmp/fsync-parts DIR [ROUNDS=500]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { DATA, FILE_SYNC, FLUSH_ONLY, RENAME, FOLDER_SYNC, PARTS };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int rounds = argc > 2 ? atoi(argv[2]) : 500;
    if (rounds < 1) rounds = 500;
    char data[2600], document[4096], temporary[4096], clean[4096];
    memset(data, 'x', sizeof data);
    snprintf(document, sizeof document, "%s/doc.md", dir);
    snprintf(clean, sizeof clean, "%s/clean.probe", dir);
    int clean_fd = open(clean, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int folder = open(dir, O_RDONLY | O_DIRECTORY);
    if (clean_fd < 0 || folder < 0 || write(clean_fd, data, 100) != 100 || fsync(clean_fd)) {
        perror(dir);
        return 1;
    }
    double *taken[PARTS];
    for (int part = 0; part < PARTS; part++) taken[part] = calloc(rounds, sizeof(double));
    for (int round = 0; round < rounds; round++) {
        snprintf(temporary, sizeof temporary, "%s/.doc.md.%d.probe", dir, round);
        int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0644);
        size_t size = sizeof data - round % 7;
        if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
            perror(temporary);
            return 1;
        }
        double at[PARTS + 1];
        at[0] = now_us();
        sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        at[1] = now_us();
        fsync(fd);
        at[2] = now_us();
        fsync(clean_fd);
        at[3] = now_us();
        close(fd);
        rename(temporary, document);
        at[4] = now_us();
        fsync(folder);
        at[5] = now_us();
        for (int part = 0; part < PARTS; part++) taken[part][round] = at[part + 1] - at[part];
    }
    const char *names[PARTS] = {"data written out (no flush)", "fsync after it",
                                "fsync with nothing to write", "close and rename",
                                "folder fsync"};
    for (int part = 0; part < PARTS; part++) {
        qsort(taken[part], rounds, sizeof(double), ascending);
        printf("%-28s p50 %5.0f us  p90 %5.0f us\n", names[part], taken[part][rounds / 2],
               taken[part][rounds * 9 / 10]);
    }
    unlink(clean);
    unlink(document);
    return 0;
}
