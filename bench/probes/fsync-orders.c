/*
 * What a durable document write costs in flushes, by the order of its syncs,
 * on the disk under a folder (loopback only; no hub involved). Each order is
 * one replacement of a 2.6 KB document, timed alone, the orders taking turns
 * so that the machine's drift falls on all alike; medians in microseconds.
 *
 *   cc -O2 -pthread -o /tmp/fsync-orders bench/probes/fsync-orders.c
 *   /tmp/fsync-orders DIR [ROUNDS=400] [WAL_PAGES=11] [GAP_US=1000]
 *
 * "log" stands for the database's commit: WAL_PAGES frames written to a log
 * file, then its fsync. The orders:
 *   hub:        new temp file; its fsync on a second thread beside the log;
 *               rename; folder fsync (what `src/docs/write.rs` does)
 *   sequential: the same, one sync after another on one thread
 *   log-first:  new temp file; log; rename; then the file's and the
 *               folder's fsync together (a crash may leave the document
 *               torn until a restart rewrites it from the database)
 *   spare:      a temp file created, written and synced earlier (its
 *               blocks and folder entry already on disk, as a file reused
 *               from write to write would be), then as "hub" (a hidden
 *               file left in the folder between writes)
 *   spare-away: the same, the spare kept in another folder of the same
 *               filesystem and renamed across into the document's
 *   unnamed:    an unnamed temp file (O_TMPFILE) opened earlier; written,
 *               synced beside the log, linked under a temporary name,
 *               renamed; folder fsync (nothing left in the folder between
 *               writes)
 *   unnamed-ahead: the same, its first block written and synced earlier
 *               (a spare made ahead, the content written over it and cut
 *               to length)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int folder, log_fd, spares;
static char content[2600], page[4096];
static long log_at;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* one file synced on a second thread, as the hub's syncing threads do */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t asked = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static int job = -1, finished;

static void *syncer(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (job < 0) pthread_cond_wait(&asked, &lock);
        int fd = job;
        job = -1;
        pthread_mutex_unlock(&lock);
        fsync(fd);
        pthread_mutex_lock(&lock);
        finished = 1;
        pthread_cond_signal(&done);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void sync_beside(int fd) {
    pthread_mutex_lock(&lock);
    job = fd;
    finished = 0;
    pthread_cond_signal(&asked);
    pthread_mutex_unlock(&lock);
}

static void wait_synced(void) {
    pthread_mutex_lock(&lock);
    while (!finished) pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
}

static void commit_log(int pages) {
    for (int i = 0; i < pages; i++) {
        if (pwrite(log_fd, page, 24, log_at) < 0 || pwrite(log_fd, page, sizeof page, log_at + 24) < 0) exit(1);
        log_at += 24 + sizeof page;
    }
    if (log_at > 4 << 20) log_at = 0;
    fsync(log_fd);
}

static int new_temp(void) {
    int fd = openat(folder, ".doc.tmp", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || write(fd, content, sizeof content) < 0) exit(1);
    return fd;
}

/* the hub's order, from a written temporary file on */
static void sync_beside_the_log(int fd, int pages) {
    sync_beside(fd);
    commit_log(pages);
    wait_synced();
}

static void sync_beside_the_log_then_rename(int fd, int pages) {
    sync_beside_the_log(fd, pages);
    renameat(folder, ".doc.tmp", folder, "doc.md");
    fsync(folder);
}

/* a spare as a reused file would be: its blocks allocated, all of it on disk */
static int created_and_synced(int in, const char *name) {
    int fd = openat(in, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || write(fd, content, sizeof content) < 0) exit(1);
    fsync(fd);
    fsync(in);
    return fd;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { HUB, SEQUENTIAL, LOG_FIRST, SPARE, SPARE_AWAY, UNNAMED, UNNAMED_AHEAD, ORDERS };
static const char *names[ORDERS] = {"hub", "sequential", "log-first", "spare", "spare-away", "unnamed", "unnamed-ahead"};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [ROUNDS] [WAL_PAGES] [GAP_US]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 400;
    int pages = argc > 3 ? atoi(argv[3]) : 11;
    int gap = argc > 4 ? atoi(argv[4]) : 1000;
    mkdir(argv[1], 0755);
    folder = open(argv[1], O_RDONLY | O_DIRECTORY);
    log_fd = openat(folder, "log", O_WRONLY | O_CREAT, 0644);
    mkdirat(folder, "spares", 0755);
    spares = openat(folder, "spares", O_RDONLY | O_DIRECTORY);
    if (folder < 0 || log_fd < 0 || spares < 0 || rounds < 1) return 1;
    memset(content, 'x', sizeof content);
    pthread_t thread;
    pthread_create(&thread, NULL, syncer, NULL);
    double *took[ORDERS];
    for (int k = 0; k < ORDERS; k++) took[k] = malloc(sizeof(double) * rounds);
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < ORDERS; k++) {
            unlinkat(folder, ".doc.tmp", 0);
            unlinkat(spares, "spare", 0);
            int fd = -1;
            if (k == SPARE) fd = created_and_synced(folder, ".doc.tmp");
            if (k == SPARE_AWAY) fd = created_and_synced(spares, "spare");
            if (k == UNNAMED && (fd = openat(folder, ".", O_TMPFILE | O_WRONLY, 0644)) < 0) return 1;
            if (k == UNNAMED_AHEAD) {
                static char block[4096];
                fd = openat(folder, ".", O_TMPFILE | O_WRONLY, 0644);
                if (fd < 0 || write(fd, block, sizeof block) < 0) return 1;
                fsync(fd);
            }
            double started = now_us();
            switch (k) {
            case HUB:
                fd = new_temp();
                sync_beside_the_log_then_rename(fd, pages);
                break;
            case SEQUENTIAL:
                fd = new_temp();
                fsync(fd);
                commit_log(pages);
                renameat(folder, ".doc.tmp", folder, "doc.md");
                fsync(folder);
                break;
            case LOG_FIRST:
                fd = new_temp();
                commit_log(pages);
                renameat(folder, ".doc.tmp", folder, "doc.md");
                sync_beside(fd);
                fsync(folder);
                wait_synced();
                break;
            case SPARE:
                if (pwrite(fd, content, sizeof content, 0) < 0) return 1;
                sync_beside_the_log_then_rename(fd, pages);
                break;
            case SPARE_AWAY:
                if (pwrite(fd, content, sizeof content, 0) < 0) return 1;
                sync_beside_the_log(fd, pages);
                renameat(spares, "spare", folder, "doc.md");
                fsync(folder);
                break;
            case UNNAMED_AHEAD:
            case UNNAMED: {
                if (pwrite(fd, content, sizeof content, 0) < 0) return 1;
                if (k == UNNAMED_AHEAD && ftruncate(fd, sizeof content) < 0) return 1;
                sync_beside_the_log(fd, pages);
                /* linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; through /proc it does not */
                char by_proc[64];
                snprintf(by_proc, sizeof by_proc, "/proc/self/fd/%d", fd);
                if (linkat(AT_FDCWD, by_proc, folder, ".doc.tmp", AT_SYMLINK_FOLLOW) < 0) return 1;
                renameat(folder, ".doc.tmp", folder, "doc.md");
                fsync(folder);
                break;
            }
            }
            took[k][i] = now_us() - started;
            close(fd);
            usleep(gap);
        }
    }
    for (int k = 0; k < ORDERS; k++) {
        qsort(took[k], rounds, sizeof(double), by_value);
        printf("%-11s p50 %5.0f us\n", names[k], took[k][rounds / 2]);
    }
    return 0;
}
