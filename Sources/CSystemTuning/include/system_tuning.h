#ifndef LINKPULSE_SYSTEM_TUNING_H
#define LINKPULSE_SYSTEM_TUNING_H

/// Turns off SQLite's memory statistics (a process-wide mutex on every allocation).
/// Returns SQLite's result code: SQLITE_MISUSE when SQLite was already initialised.
int linkpulse_sqlite_disable_memstatus(void);

/// Caps glibc's malloc arenas (by default up to eight per core, one per allocating thread).
/// Returns 1 on success.
int linkpulse_limit_malloc_arenas(int arenas);

/// Lowers the scheduling priority of the calling thread only (Linux: a thread's nice value is
/// its own). Returns 0 on success, -1 where the system does not allow it.
int linkpulse_nice_this_thread(int nice);

#endif
