#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "system_tuning.h"

// sqlite3_config and syscall are variadic, which Swift cannot call; mallopt is in <malloc.h>,
// which the Glibc module does not export. These calls are the whole reason for this C target.
int linkpulse_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int linkpulse_tune_malloc(int arenas, int mmap_threshold) {
    return mallopt(M_ARENA_MAX, arenas) && mallopt(M_MMAP_THRESHOLD, mmap_threshold);
}

int linkpulse_nice_this_thread(int nice) {
#ifdef SYS_gettid
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
#else
    return -1;
#endif
}

// Each thread reads its own /proc/thread-self/schedstat through a descriptor opened once and
// closed when the thread ends (a thread-specific key's destructor): a read is then one pread.
static pthread_key_t schedstat_key;
static pthread_once_t schedstat_once = PTHREAD_ONCE_INIT;

static void schedstat_close(void *value) {
    close((int)(intptr_t)value - 1);
}

static void schedstat_make_key(void) {
    pthread_key_create(&schedstat_key, schedstat_close);
}

long long linkpulse_thread_runqueue_wait_ns(void) {
    pthread_once(&schedstat_once, schedstat_make_key);
    // Stored plus one, so that a null value means "not opened yet".
    int fd = (int)(intptr_t)pthread_getspecific(schedstat_key) - 1;
    if (fd < 0) {
        fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        pthread_setspecific(schedstat_key, (void *)(intptr_t)(fd + 1));
    }
    char text[96];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) return -1;
    text[n] = 0;
    // "<time on the CPU> <time waiting for a CPU> <timeslices>", in nanoseconds.
    char *end;
    strtoull(text, &end, 10);
    if (end == text) return -1;
    char *wait_start = end;
    unsigned long long wait = strtoull(wait_start, &end, 10);
    return end == wait_start ? -1 : (long long)wait;
}

// memfd_create is declared only with _GNU_SOURCE, which the Glibc module does not set; the
// system call is the same.
int linkpulse_private_file(const char *name) {
#ifdef SYS_memfd_create
    return (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
#else
    return -1;
#endif
}
