// The C surface Hudson needs from libsqlite3 (Debian's libsqlite3-dev).
// Only variadic functions need wrappers: Swift cannot call C varargs directly.
#include <sqlite3.h>

// Turns off double-quoted string literals, so a misspelt column name is an error
// rather than a string (https://sqlite.org/quirks.html#dblquote).
static inline int hudson_sqlite3_disable_dqs(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}

// SQLITE_TRANSIENT is a macro over a cast of -1 that Swift cannot import.
static inline sqlite3_destructor_type hudson_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}
