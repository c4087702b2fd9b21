#include <malloc.h>
#include <sqlite3.h>
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
