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

// Turns off SQLite's memory statistics (https://sqlite.org/c3ref/c_config_covering_index_scan.html,
// SQLITE_CONFIG_MEMSTATUS), which Debian's build keeps on: every allocation then takes a
// global mutex to count itself, and nothing here reads the counts. It must come before
// the library initializes (the first open); later it answers SQLITE_MISUSE and changes
// nothing.
static inline int hudson_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// The bytes SQLite adds to each page of a page cache, to size the slots of
// SQLITE_CONFIG_PAGECACHE (https://sqlite.org/c3ref/c_config_covering_index_scan.html,
// SQLITE_CONFIG_PCACHE_HDRSZ); -1 once the library has initialized.
static inline int hudson_sqlite3_pcache_header_size(void) {
    int size = 0;
    return sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &size) == SQLITE_OK ? size : -1;
}

// Gives SQLite `slots` slots of `slot_size` bytes at `buffer` for every page cache of the
// process (SQLITE_CONFIG_PAGECACHE); the memory must outlive the library's use. Like the
// setting above, only before the library initializes.
static inline int hudson_sqlite3_config_pagecache(void *buffer, int slot_size, int slots) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, buffer, slot_size, slots);
}

// SQLITE_TRANSIENT is a macro over a cast of -1 that Swift cannot import.
static inline sqlite3_destructor_type hudson_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

// ---------------------------------------------------------------------------------------
// hudson_rows: many rows passed to one statement as one argument, so that a write of a
// thousand rows is one statement, not a thousand. Swift builds the rows here (integers,
// text, NULLs; `columns` fields a row), binds them with hudson_rows_bind, and the SQL
// reads them as a table: `FROM hudson_rows(?) AS r`, then r.c0 ... r.c7 (NULL past the
// row's width). Read in place, natively typed: JSON text read by json_each cost more to
// parse than the statements it replaced (docs/performance.md, "hd-mark"). The pattern is
// SQLite's own carray extension (ext/misc/carray.c), which Debian does not build in.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct hudson_rows {
    int columns;
    int64_t fields;        // fields appended
    int64_t capacity;      // fields allocated
    int64_t *values;       // an integer, or the offset of a text in `text`
    int32_t *kinds;        // HUDSON_ROWS_INTEGER, HUDSON_ROWS_NULL, or a text's length in bytes
    char *text;
    int64_t text_used;
    int64_t text_capacity;
} hudson_rows;

enum { HUDSON_ROWS_INTEGER = -1, HUDSON_ROWS_NULL = -2, HUDSON_ROWS_WIDTH = 8 };

static inline hudson_rows *hudson_rows_new(int columns) {
    if (columns < 1 || columns > HUDSON_ROWS_WIDTH) return 0;
    hudson_rows *rows = calloc(1, sizeof *rows);
    if (rows) rows->columns = columns;
    return rows;
}

static inline void hudson_rows_free(hudson_rows *rows) {
    if (!rows) return;
    free(rows->values);
    free(rows->kinds);
    free(rows->text);
    free(rows);
}

static inline int64_t hudson_rows_count(const hudson_rows *rows) {
    return rows->fields / rows->columns;
}

// Room for one more field; 0 when out of memory.
static inline int hudson_rows_reserve(hudson_rows *rows) {
    if (rows->fields < rows->capacity) return 1;
    int64_t capacity = rows->capacity ? rows->capacity * 2 : 64;
    int64_t *values = realloc(rows->values, (size_t)capacity * sizeof *values);
    if (!values) return 0;
    rows->values = values;
    int32_t *kinds = realloc(rows->kinds, (size_t)capacity * sizeof *kinds);
    if (!kinds) return 0;
    rows->kinds = kinds;
    rows->capacity = capacity;
    return 1;
}

static inline int hudson_rows_append_integer(hudson_rows *rows, int64_t value) {
    if (!hudson_rows_reserve(rows)) return 0;
    rows->values[rows->fields] = value;
    rows->kinds[rows->fields] = HUDSON_ROWS_INTEGER;
    rows->fields++;
    return 1;
}

static inline int hudson_rows_append_null(hudson_rows *rows) {
    if (!hudson_rows_reserve(rows)) return 0;
    rows->values[rows->fields] = 0;
    rows->kinds[rows->fields] = HUDSON_ROWS_NULL;
    rows->fields++;
    return 1;
}

// Copies `length` bytes of UTF-8 (NUL bytes included).
static inline int hudson_rows_append_text(hudson_rows *rows, const char *bytes, int32_t length) {
    if (length < 0 || !hudson_rows_reserve(rows)) return 0;
    if (rows->text_used + length > rows->text_capacity) {
        int64_t capacity = rows->text_capacity ? rows->text_capacity : 1024;
        while (capacity < rows->text_used + length) capacity *= 2;
        char *text = realloc(rows->text, (size_t)capacity);
        if (!text) return 0;
        rows->text = text;
        rows->text_capacity = capacity;
    }
    if (length > 0) memcpy(rows->text + rows->text_used, bytes, (size_t)length);
    rows->values[rows->fields] = rows->text_used;
    rows->kinds[rows->fields] = length;
    rows->text_used += length;
    rows->fields++;
    return 1;
}

// The pointer type is compared by SQLite, and must be a string that outlives the binding.
static inline int hudson_rows_bind(sqlite3_stmt *statement, int index, hudson_rows *rows) {
    return sqlite3_bind_pointer(statement, index, rows, "hudson_rows", 0);
}

typedef struct hudson_rows_cursor {
    sqlite3_vtab_cursor base;
    const hudson_rows *rows;
    int64_t row;
} hudson_rows_cursor;

static inline int hudson_rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                                      sqlite3_vtab **table, char **error) {
    (void)aux; (void)argc; (void)argv; (void)error;
    int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(c0, c1, c2, c3, c4, c5, c6, c7, rows HIDDEN)");
    if (rc != SQLITE_OK) return rc;
    sqlite3_vtab *vtab = sqlite3_malloc(sizeof *vtab);
    if (!vtab) return SQLITE_NOMEM;
    memset(vtab, 0, sizeof *vtab);
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *table = vtab;
    return SQLITE_OK;
}

static inline int hudson_rows_disconnect(sqlite3_vtab *table) {
    sqlite3_free(table);
    return SQLITE_OK;
}

static inline int hudson_rows_open(sqlite3_vtab *table, sqlite3_vtab_cursor **cursor) {
    (void)table;
    hudson_rows_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *cursor = &c->base;
    return SQLITE_OK;
}

static inline int hudson_rows_close(sqlite3_vtab_cursor *cursor) {
    sqlite3_free(cursor);
    return SQLITE_OK;
}

// The rows argument is required: a plan without it is refused.
static inline int hudson_rows_best_index(sqlite3_vtab *table, sqlite3_index_info *info) {
    (void)table;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
        if (constraint->iColumn != HUDSON_ROWS_WIDTH || constraint->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
        if (!constraint->usable) return SQLITE_CONSTRAINT;
        info->aConstraintUsage[i].argvIndex = 1;
        info->aConstraintUsage[i].omit = 1;
        info->idxNum = 1;
        info->estimatedCost = 1.0;
        info->estimatedRows = 25;
        return SQLITE_OK;
    }
    return SQLITE_CONSTRAINT;
}

static inline int hudson_rows_filter(sqlite3_vtab_cursor *cursor, int idxNum, const char *idxStr,
                                     int argc, sqlite3_value **argv) {
    (void)idxStr;
    hudson_rows_cursor *c = (hudson_rows_cursor *)cursor;
    c->rows = (idxNum == 1 && argc == 1) ? sqlite3_value_pointer(argv[0], "hudson_rows") : 0;
    c->row = 0;
    return SQLITE_OK;
}

static inline int hudson_rows_next(sqlite3_vtab_cursor *cursor) {
    ((hudson_rows_cursor *)cursor)->row++;
    return SQLITE_OK;
}

static inline int hudson_rows_eof(sqlite3_vtab_cursor *cursor) {
    hudson_rows_cursor *c = (hudson_rows_cursor *)cursor;
    return !c->rows || c->row >= hudson_rows_count(c->rows);
}

static inline int hudson_rows_column(sqlite3_vtab_cursor *cursor, sqlite3_context *context, int column) {
    hudson_rows_cursor *c = (hudson_rows_cursor *)cursor;
    if (column >= c->rows->columns) {
        sqlite3_result_null(context);
        return SQLITE_OK;
    }
    int64_t field = c->row * c->rows->columns + column;
    int32_t kind = c->rows->kinds[field];
    if (kind == HUDSON_ROWS_INTEGER) {
        sqlite3_result_int64(context, c->rows->values[field]);
    } else if (kind == HUDSON_ROWS_NULL) {
        sqlite3_result_null(context);
    } else {
        // Static: the rows outlive the statement's use of them (Statement keeps them bound).
        const char *text = c->rows->text ? c->rows->text + c->rows->values[field] : "";
        sqlite3_result_text(context, text, kind, SQLITE_STATIC);
    }
    return SQLITE_OK;
}

static inline int hudson_rows_rowid(sqlite3_vtab_cursor *cursor, sqlite3_int64 *rowid) {
    *rowid = ((hudson_rows_cursor *)cursor)->row;
    return SQLITE_OK;
}

// Makes hudson_rows available on one connection (eponymous: no CREATE VIRTUAL TABLE).
static inline int hudson_rows_register(sqlite3 *db) {
    static const sqlite3_module module = {
        .iVersion = 0,
        .xCreate = 0,  // eponymous only
        .xConnect = hudson_rows_connect,
        .xBestIndex = hudson_rows_best_index,
        .xDisconnect = hudson_rows_disconnect,
        .xDestroy = 0,
        .xOpen = hudson_rows_open,
        .xClose = hudson_rows_close,
        .xFilter = hudson_rows_filter,
        .xNext = hudson_rows_next,
        .xEof = hudson_rows_eof,
        .xColumn = hudson_rows_column,
        .xRowid = hudson_rows_rowid,
    };
    return sqlite3_create_module(db, "hudson_rows", &module, 0);
}
