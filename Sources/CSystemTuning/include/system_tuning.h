#ifndef LINKPULSE_SYSTEM_TUNING_H
#define LINKPULSE_SYSTEM_TUNING_H

/// Turns off SQLite's memory statistics (a process-wide mutex on every allocation).
/// Returns SQLite's result code: SQLITE_MISUSE when SQLite was already initialised.
int linkpulse_sqlite_disable_memstatus(void);

/// Caps glibc's malloc arenas (by default up to eight per core, one per allocating thread) and
/// fixes the size from which an allocation gets pages of its own, given back when it is freed
/// (by default that size grows with the largest block freed, up to 32 MiB, and freed blocks
/// below it stay in the heap). Returns 1 on success.
int linkpulse_tune_malloc(int arenas, int mmap_threshold);

/// Lowers the scheduling priority of the calling thread only (Linux: a thread's nice value is
/// its own). Returns 0 on success, -1 where the system does not allow it.
int linkpulse_nice_this_thread(int nice);

/// How long the calling thread has waited, runnable, for a CPU since it started, in nanoseconds
/// (the second field of Linux's /proc/thread-self/schedstat); -1 where it cannot be read.
long long linkpulse_thread_runqueue_wait_ns(void);

/// An anonymous file in memory (Linux's memfd_create, close-on-exec): what the process writes
/// there no other process can change. Returns its descriptor, or -1.
int linkpulse_private_file(const char *name);

#endif
