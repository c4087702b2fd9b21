#include <malloc.h>
#include <sqlite3.h>
#include "system_tuning.h"

// sqlite3_config is variadic, which Swift cannot call; mallopt is in <malloc.h>, which the
// Glibc module does not export. These two calls are the whole reason for this C target.
int linkpulse_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int linkpulse_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}
