import GRDB
import GRDBSQLite
import LinkpulseDomain

/// Direct binding and stepping of a GRDB-cached statement, for statements run once per event
/// or per row: the ingest writer, the rollup pass and the stats reads. GRDB's
/// `StatementArguments` and `Row` box every value in an existential, which costs more than the
/// insert or read itself at tens of thousands of rows a second; here values go straight to and
/// from `sqlite3_bind_*` / `sqlite3_column_*`. The statement comes from
/// `Database.cachedStatement` and is held here, so it stays alive even if GRDB drops it from its
/// cache meanwhile (GRDB finalizes a statement when its last holder lets go); it is reset before
/// every use.
///
/// In a debug build (the tests) it also checks its Swift side: running it before every one of
/// the statement's parameters has been bound since it was made stops the program, naming the
/// statement (a parameter left out would read as NULL and answer wrongly without a word).
struct HotStatement {
    let handle: OpaquePointer
    let db: Database
    private let statement: Statement
    #if DEBUG
    private let bound = BoundParameters()
    #endif

    init(_ statement: Statement, in db: Database) {
        self.statement = statement
        self.handle = statement.sqliteStatement
        self.db = db
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    #if DEBUG
    /// The parameters bound since the statement was made (a bit each, 1-based).
    final class BoundParameters: @unchecked Sendable {
        var mask: UInt64 = 0
    }
    #endif

    /// Notes that parameter `index` is bound (debug builds).
    @inline(__always) private func noteBound(_ index: Int32) {
        #if DEBUG
        if index >= 1 && index <= 64 { bound.mask |= 1 << UInt64(index - 1) }
        #endif
    }

    /// Stops a debug build that runs the statement with a parameter never bound.
    @inline(__always) private func checkBound() {
        #if DEBUG
        let count = Int(sqlite3_bind_parameter_count(handle))
        let wanted: UInt64 = count >= 64 ? .max : (1 << UInt64(count)) - 1
        assert(bound.mask & wanted == wanted, "a parameter of this statement is never bound: \(sql)")
        #endif
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds a value to the parameter named `name` (`":seq"`, as the statement writes it);
    /// throws when the statement has no such parameter or SQLite refuses the value. For
    /// statements bound once per run; a hot loop binding a row at a time names its parameters
    /// with a `StatementParameter` enum instead (no lookup).
    func bind(_ name: StaticString, _ value: String?) throws { try bind(at: index(of: name), value) }
    func bind(_ name: StaticString, _ value: Int64?) throws { try bind(at: index(of: name), value) }
    func bind(_ name: StaticString, _ value: Bool?) throws { try bind(at: index(of: name), value) }
    func bind(_ name: StaticString, _ value: [UInt8]?) throws { try bind(at: index(of: name), value) }

    /// Binds a value to `parameter` (a hot loop's named position, checked against the statement
    /// by `StatementParametersTests`).
    @inline(__always) func bind(_ parameter: some StatementParameter, _ value: String?) throws { try bind(at: parameter.rawValue, value) }
    @inline(__always) func bind(_ parameter: some StatementParameter, _ value: Int64?) throws { try bind(at: parameter.rawValue, value) }
    @inline(__always) func bind(_ parameter: some StatementParameter, _ value: Bool?) throws { try bind(at: parameter.rawValue, value) }
    @inline(__always) func bind(_ parameter: some StatementParameter, _ value: [UInt8]?) throws { try bind(at: parameter.rawValue, value) }

    /// The position of the parameter named `name` (a string literal, which the compiler ends
    /// with the NUL SQLite reads up to).
    func index(of name: StaticString) throws -> Int32 {
        let index = name.withUTF8Buffer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { sqlite3_bind_parameter_index(handle, $0.baseAddress) }
        }
        guard index > 0 else { throw DatabaseError(resultCode: .SQLITE_RANGE, message: "no parameter \(name) in \(sql)") }
        return index
    }

    private var sql: String { sqlite3_sql(handle).map { String(cString: $0) } ?? "?" }

    /// Binds a value to parameter `index` (1-based); throws when SQLite refuses it (an index
    /// out of range, a value too big).
    private func bind(at index: Int32, _ value: String?) throws {
        noteBound(index)
        guard var value else { return try check(sqlite3_bind_null(handle, index)) }
        try value.withUTF8 { bytes in
            try check(sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient))
        }
    }

    private func bind(at index: Int32, _ value: Int64?) throws {
        noteBound(index)
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try check(sqlite3_bind_int64(handle, index, value))
    }

    private func bind(at index: Int32, _ value: Bool?) throws {
        try bind(at: index, value.map { $0 ? Int64(1) : 0 })
    }

    private func bind(at index: Int32, _ value: [UInt8]?) throws {
        noteBound(index)
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try value.withUnsafeBytes { bytes in
            try check(sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient))
        }
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Steps a query: true while it has a row (read it with the column accessors), false when
    /// done. Call `finish()` (or `run()`-style reuse resets it) when stopping early.
    func step() throws -> Bool {
        checkBound()
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
        return false
    }

    /// Resets a query stopped before its last row.
    func finish() { sqlite3_reset(handle) }

    /// The column of a statement that answers one.
    static let onlyColumn: Int32 = 0

    func int64(_ column: some ColumnIndex) -> Int64 { sqlite3_column_int64(handle, column.index) }

    func isNull(_ column: some ColumnIndex) -> Bool { sqlite3_column_type(handle, column.index) == SQLITE_NULL }

    func text(_ column: some ColumnIndex) -> String? {
        guard let pointer = sqlite3_column_text(handle, column.index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column.index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Calls `body` with a text column's UTF-8 bytes, without copying them into a String; nil
    /// when the column is NULL. The bytes are valid only inside `body`.
    func withText<R>(_ column: some ColumnIndex, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let pointer = sqlite3_column_text(handle, column.index) else { return nil }
        return body(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column.index))))
    }

    /// A text column's UTF-8 bytes, nil when it is NULL; valid until the statement steps or
    /// resets (reading other columns of the row leaves them alone).
    func textBytes(_ column: some ColumnIndex) -> UnsafeBufferPointer<UInt8>? {
        guard let pointer = sqlite3_column_text(handle, column.index) else { return nil }
        return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column.index)))
    }

    /// The counts of a rollup row, from `first` on, in `rollup_counts.sql` order: events,
    /// clicks, fallbacks, four installs by match, opens, deferred opens, then (after the
    /// sketch, at `first + 10`) installs by install referrer and the five opens by match.
    func counts(from column: some ColumnIndex) -> ConversionCounts {
        let first = column.index
        var c = ConversionCounts()
        (c.events, c.clicks, c.fallbacks) = (Int(int64(first)), Int(int64(first + 1)), Int(int64(first + 2)))
        (c.installsClickId, c.installsRef, c.installsFingerprint, c.installsOrganic) =
            (Int(int64(first + 3)), Int(int64(first + 4)), Int(int64(first + 5)), Int(int64(first + 6)))
        (c.opens, c.deferredOpens) = (Int(int64(first + 7)), Int(int64(first + 8)))
        c.installsInstallReferrer = Int(int64(first + 10))
        (c.opensInstallReferrer, c.opensClickId, c.opensRef, c.opensFingerprint, c.opensOrganic) =
            (Int(int64(first + 11)), Int(int64(first + 12)), Int(int64(first + 13)), Int(int64(first + 14)), Int(int64(first + 15)))
        return c
    }

    /// Whether a column of the current row holds a blob.
    func columnIsBlob(_ column: some ColumnIndex) -> Bool { sqlite3_column_type(handle, column.index) == SQLITE_BLOB }

    /// The value of a column of the current row with its storage class, as a sealed block
    /// keeps it.
    func blockValue(_ column: Int32) -> EventBlock.Value {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(textBytes(column).map(Array.init) ?? [])
        case SQLITE_BLOB: return .blob(blob(column).map { Array($0) } ?? [])
        default: return .null
        }
    }

    /// A blob column's bytes, valid until the statement steps or resets.
    func blob(_ column: some ColumnIndex) -> UnsafeRawBufferPointer? {
        guard let pointer = sqlite3_column_blob(handle, column.index) else { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column.index)))
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        checkBound()
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// `run()` with `bytes` bound to the parameter named `name` in place, not copied (`SQLITE_STATIC`):
    /// SQLite reads them while the statement runs, and the parameter is bound to NULL before
    /// they can go. For blobs of megabytes (cube parts and blocks), where the copy a bind makes
    /// was the third copy of a merge's output in the heap at once.
    func run(binding bytes: [UInt8], at name: StaticString) throws {
        let index = try index(of: name)
        noteBound(index)
        try bytes.withUnsafeBytes { raw in
            defer { sqlite3_bind_null(handle, index) }
            // An empty array's base address may be nil, which SQLite would store as NULL.
            try check(sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), nil))
            try run()
        }
    }

    /// Runs a query and hands each row's first column, as an integer, to `body`.
    func forEachInt64(_ body: (Int64) throws -> Void) throws {
        checkBound()
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            try body(sqlite3_column_int64(handle, 0))
        }
    }

    /// Runs a query and returns the first row's first column as an integer (nil when no row).
    func firstInt64() throws -> Int64? {
        checkBound()
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw error(code) }
        return sqlite3_column_int64(handle, 0)
    }

    /// Runs a query and returns the first row's first column as text (nil when no row).
    func firstText() throws -> String? {
        checkBound()
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw error(code) }
        guard let text = sqlite3_column_text(handle, 0) else { return nil }
        return String(cString: text)
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }
}
