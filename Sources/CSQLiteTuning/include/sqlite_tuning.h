#ifndef LINKPULSE_SQLITE_TUNING_H
#define LINKPULSE_SQLITE_TUNING_H

/// Turns off SQLite's memory statistics (a process-wide mutex on every allocation).
/// Returns SQLite's result code: SQLITE_MISUSE when SQLite was already initialised.
int linkpulse_sqlite_disable_memstatus(void);

#endif
