import Foundation
import GRDB
import GRDBSQLite

/// `event_archive`: the events sealed into `event_blocks`, read as rows shaped like
/// `event_rows` (same columns, same values, same storage classes), through an eponymous SQLite
/// virtual table registered on every connection that reads events.
///
/// The table answers seq bounds (`=`, `<`, `<=`, `>`, `>=`) and event-time bounds by reading
/// only the blocks that can hold such rows, and gives rows in seq order. A statement reads the
/// hot rows of `event_rows` and the sealed ones here as two arms of a `UNION ALL` (a row is in
/// exactly one of them). The last few blocks inflated are kept per connection, so point
/// lookups of neighbouring seqs (clicks matched by the installs after them) inflate a block once.
enum EventArchiveTable {
    /// The columns of a sealed row, in `event_rows` order with their declared types. A block
    /// stores exactly these, in this order (`EventArchiveTests` checks them against the table).
    static let columns: [(name: String, type: String)] = [
        ("seq", "INTEGER"), ("event_id", "BLOB"), ("type", "INTEGER"), ("platform", "INTEGER"), ("bot", "INTEGER"),
        ("occurred_at_ms", "INTEGER"), ("received_delta", "INTEGER"), ("sent_delta", "INTEGER"),
        ("ref", "TEXT"), ("campaign", "TEXT"), ("source", "TEXT"), ("medium", "TEXT"), ("deferred", "INTEGER"),
        ("visitor", "BLOB"), ("ip_hash", "BLOB"), ("device_id", "BLOB"), ("click_id", "BLOB"), ("url", "TEXT"),
        ("referrer", "TEXT"), ("user_agent", "INTEGER"), ("os_version", "INTEGER"), ("app_version", "INTEGER"),
        ("bot_reason", "INTEGER"), ("properties", "TEXT"), ("click_id_source", "INTEGER"), ("resolve", "INTEGER"),
        ("install_referrer", "TEXT"), ("audience", "INTEGER"),
    ]
    static let seqColumn: Int32 = 0
    static let timeColumn: Int32 = 5

    /// The statements the table runs on its own connection to find and read blocks.
    struct Statements: Sendable {
        /// Parameters: lowest seq, highest seq, earliest and latest event time (all inclusive);
        /// yields id and first_seq of every block that can hold such rows, in seq order.
        let blocksInRange: String
        /// The same blocks (same parameters) in the order of their earliest event time, for a
        /// scan in time order.
        let blocksByTime: String
        /// Parameter: a block id; yields its data.
        let blockData: String
    }

    /// Registers `event_archive` on a connection whose `schema` (main, or the name the events
    /// file is attached as) holds `event_blocks`.
    static func register(in db: Database, statements: Statements) throws {
        let context = Unmanaged.passRetained(Context(statements: statements)).toOpaque()
        let code = sqlite3_create_module_v2(
            db.sqliteConnection, "event_archive", module, context,
            { Unmanaged<Context>.fromOpaque($0!).release() })
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "event_archive could not be registered")
        }
    }

    /// What every instance of the table on one connection shares: its statements and the
    /// blocks inflated last.
    final class Context {
        let statements: Statements
        /// Blocks inflated last, by block id (ids are never reused: a block rewritten is a new
        /// row), newest last.
        var recent: [(id: Int64, block: EventBlock.Inflated)] = []
        static let recentLimit = 4

        /// The statements, prepared at first use on the table's connection and finalized when
        /// SQLite disconnects the table (before it closes the connection).
        private var prepared: [String: OpaquePointer] = [:]

        init(statements: Statements) { self.statements = statements }

        /// `sql` prepared on `db`, reset and without bindings.
        func statement(_ sql: String, _ db: OpaquePointer) throws -> OpaquePointer {
            if let statement = prepared[sql] {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
                return statement
            }
            let statement = try prepare(sql, db)
            prepared[sql] = statement
            return statement
        }

        func finalizeStatements() {
            for statement in prepared.values { sqlite3_finalize(statement) }
            prepared = [:]
            recent = []
        }

        func block(id: Int64, db: OpaquePointer) throws -> EventBlock.Inflated {
            if let i = recent.firstIndex(where: { $0.id == id }) {
                let hit = recent.remove(at: i)
                recent.append(hit)
                return hit.block
            }
            let statement = try statement(statements.blockData, db)
            defer { sqlite3_reset(statement) }
            sqlite3_bind_int64(statement, try EventArchiveTable.parameter(":id", of: statement), id)
            guard sqlite3_step(statement) == SQLITE_ROW, let bytes = sqlite3_column_blob(statement, 0) else {
                throw EventBlock.Corrupt(description: "event block \(id) has no data")
            }
            let block = try EventBlock.Inflated(compressed: UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, 0))))
            if recent.count == Self.recentLimit { recent.removeFirst() }
            recent.append((id, block))
            return block
        }
    }

    /// The position of `statement`'s parameter named `name` (`":id"`); throws when it has none.
    static func parameter(_ name: String, of statement: OpaquePointer) throws -> Int32 {
        let index = sqlite3_bind_parameter_index(statement, name)
        guard index > 0 else { throw DatabaseError(resultCode: .SQLITE_RANGE, message: "no parameter \(name) in \(String(cString: sqlite3_sql(statement)))") }
        return index
    }

    static func prepare(_ sql: String, _ db: OpaquePointer) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db)))
        }
        return statement
    }

    /// The table (`sqlite3_vtab` first, as SQLite requires, then what this code keeps).
    struct Table {
        var base = sqlite3_vtab()
        var db: OpaquePointer
        var context: Unmanaged<Context>
    }

    /// A cursor (`sqlite3_vtab_cursor` first).
    struct CursorBox {
        var base = sqlite3_vtab_cursor()
        var cursor: Unmanaged<Cursor>
    }

    /// Bounds a statement put on the rows, all inclusive.
    struct Bounds {
        var lowSeq = Int64.min, highSeq = Int64.max
        var earliest = Int64.min, latest = Int64.max
        var empty = false

        /// Narrows by `column op value` (op one of SQLite's constraint codes); a value that is
        /// not a number leaves the bounds as they are (SQLite checks every row again).
        mutating func apply(column: Int32, op: Int32, _ value: OpaquePointer?) {
            let type = sqlite3_value_numeric_type(value)
            if type == SQLITE_NULL { empty = true; return }
            guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return }
            let exact = type == SQLITE_INTEGER
            let real = sqlite3_value_double(value)
            guard exact || (real > -9.0e18 && real < 9.0e18) else { return }
            let int = exact ? sqlite3_value_int64(value) : Int64(real.rounded(.down))
            // The smallest integer ≥ value, and the largest ≤ value.
            let ceilValue = exact ? int : Int64(real.rounded(.up))
            var low = Int64.min, high = Int64.max
            switch op {
            case Int32(SQLITE_INDEX_CONSTRAINT_EQ):
                guard exact || real == real.rounded() else { empty = true; return }
                (low, high) = (int, int)
            case Int32(SQLITE_INDEX_CONSTRAINT_GT): low = exact || real == real.rounded() ? int &+ 1 : ceilValue
            case Int32(SQLITE_INDEX_CONSTRAINT_GE): low = ceilValue
            case Int32(SQLITE_INDEX_CONSTRAINT_LT): high = exact || real == real.rounded() ? int &- 1 : int
            case Int32(SQLITE_INDEX_CONSTRAINT_LE): high = int
            default: return
            }
            if column == EventArchiveTable.seqColumn {
                lowSeq = max(lowSeq, low); highSeq = min(highSeq, high)
            } else {
                earliest = max(earliest, low); latest = min(latest, high)
            }
        }
    }

    /// A scan in progress: the blocks left to read and the row it is on.
    ///
    /// In seq order (the default) it reads the blocks one after the other. In time order
    /// (`ORDER BY occurred_at_ms, seq`) it reads them by their earliest event time and merges
    /// their rows through a heap: a row is given once no block still unread can hold an earlier
    /// one. Blocks span little event time each (sealing leaves far-off events out), so only a
    /// few are open at once, and a block is let go as soon as its last row is given.
    final class Cursor {
        let db: OpaquePointer
        let context: Context
        var bounds = Bounds()
        var inTimeOrder = false
        var blockIds: [Int64] = []
        /// The earliest event time of each of `blockIds` (time order only).
        var blockEarliest: [Int64] = []
        var nextBlock = 0
        /// The block and row the cursor is on (what `xColumn` reads).
        var block: EventBlock.Inflated? {
            didSet { unretainedBlock = block.map(Unmanaged.passUnretained) }
        }
        /// `block`, which keeps it alive, for `xColumn` to read with no reference count.
        private(set) var unretainedBlock: Unmanaged<EventBlock.Inflated>?
        var row = 0
        var eof = true
        /// Time order: the blocks read and not yet drained, their rows not yet given, and the
        /// rows waiting, smallest (time, seq) first.
        var open: [EventBlock.Inflated?] = []
        var waiting: [Int] = []
        var heap: [Pending] = []
        var current: Int?

        struct Pending {
            var time: Int64, seq: Int64
            var slot: Int32, row: Int32

            func precedes(_ other: Pending) -> Bool { time != other.time ? time < other.time : seq < other.seq }
        }

        init(db: OpaquePointer, context: Context) {
            self.db = db
            self.context = context
        }

        func start(_ bounds: Bounds, inTimeOrder: Bool) throws {
            self.bounds = bounds
            self.inTimeOrder = inTimeOrder
            blockIds = []
            blockEarliest = []
            nextBlock = 0
            block = nil
            open = []
            waiting = []
            heap = []
            current = nil
            eof = false
            if bounds.empty || bounds.lowSeq > bounds.highSeq || bounds.earliest > bounds.latest {
                eof = true
                return
            }
            let statement = try context.statement(inTimeOrder ? context.statements.blocksByTime : context.statements.blocksInRange, db)
            defer { sqlite3_reset(statement) }
            sqlite3_bind_int64(statement, try EventArchiveTable.parameter(":low_seq", of: statement), bounds.lowSeq)
            sqlite3_bind_int64(statement, try EventArchiveTable.parameter(":high_seq", of: statement), bounds.highSeq)
            sqlite3_bind_int64(statement, try EventArchiveTable.parameter(":earliest_ms", of: statement), bounds.earliest)
            sqlite3_bind_int64(statement, try EventArchiveTable.parameter(":latest_ms", of: statement), bounds.latest)
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db)))
                }
                blockIds.append(sqlite3_column_int64(statement, 0))
                if inTimeOrder { blockEarliest.append(sqlite3_column_int64(statement, 1)) }
            }
            row = -1
            try advance()
        }

        func advance() throws {
            if inTimeOrder { try advanceInTime() } else { try advanceInSeq() }
        }

        private func within(_ seq: Int64, _ time: Int64) -> Bool {
            seq >= bounds.lowSeq && seq <= bounds.highSeq && time >= bounds.earliest && time <= bounds.latest
        }

        /// Moves to the next row within the bounds, inflating the next block when one runs out.
        private func advanceInSeq() throws {
            while true {
                if let block {
                    row += 1
                    // Seqs rise through a block: from the first row within the low bound.
                    if row == 0, bounds.lowSeq > Int64.min {
                        row = try firstRow(atLeast: bounds.lowSeq, in: block)
                    }
                    while row < block.rowCount {
                        let seq = try block.integer(row: row, column: Int(seqColumn))
                        if seq > bounds.highSeq { break }
                        if within(seq, try block.integer(row: row, column: Int(timeColumn))) { return }
                        row += 1
                    }
                    if row < block.rowCount { eof = true; return }  // past the highest seq
                }
                guard nextBlock < blockIds.count else {
                    block = nil
                    eof = true
                    return
                }
                block = try context.block(id: blockIds[nextBlock], db: db)
                nextBlock += 1
                row = -1
            }
        }

        private func advanceInTime() throws {
            if let slot = current {
                waiting[slot] -= 1
                if waiting[slot] == 0 { open[slot] = nil }
            }
            while nextBlock < blockIds.count, heap.isEmpty || blockEarliest[nextBlock] <= heap[0].time {
                let read = try context.block(id: blockIds[nextBlock], db: db)
                nextBlock += 1
                let slot = Int32(open.count)
                var count = 0
                for r in 0..<read.rowCount {
                    let seq = try read.integer(row: r, column: Int(seqColumn))
                    let time = try read.integer(row: r, column: Int(timeColumn))
                    guard within(seq, time) else { continue }
                    push(Pending(time: time, seq: seq, slot: slot, row: Int32(r)))
                    count += 1
                }
                open.append(count > 0 ? read : nil)
                waiting.append(count)
            }
            guard let next = pop() else {
                block = nil
                current = nil
                eof = true
                return
            }
            current = Int(next.slot)
            block = open[Int(next.slot)]
            row = Int(next.row)
        }

        private func push(_ item: Pending) {
            heap.append(item)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard heap[i].precedes(heap[parent]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
        }

        private func pop() -> Pending? {
            guard let top = heap.first else { return nil }
            let last = heap.removeLast()
            if heap.isEmpty { return top }
            heap[0] = last
            var i = 0
            while true {
                let left = 2 * i + 1, right = left + 1
                var smallest = i
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == i { break }
                heap.swapAt(i, smallest)
                i = smallest
            }
            return top
        }

        private func firstRow(atLeast seq: Int64, in block: EventBlock.Inflated) throws -> Int {
            var low = 0, high = block.rowCount
            while low < high {
                let mid = (low + high) / 2
                if try block.integer(row: mid, column: Int(seqColumn)) < seq { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// Plan codes: one per argument, four bits each (column bit 3, constraint 0–7), at most six;
    /// bit 24 asks for time order; bits 28 and up count the arguments.
    private static let opCodes: [Int32] = [
        Int32(SQLITE_INDEX_CONSTRAINT_EQ), Int32(SQLITE_INDEX_CONSTRAINT_GT), Int32(SQLITE_INDEX_CONSTRAINT_LE),
        Int32(SQLITE_INDEX_CONSTRAINT_LT), Int32(SQLITE_INDEX_CONSTRAINT_GE),
    ]

    private static func table(_ vtab: UnsafeMutablePointer<sqlite3_vtab>?) -> UnsafeMutablePointer<Table> {
        UnsafeMutableRawPointer(vtab!).assumingMemoryBound(to: Table.self)
    }

    private static func cursor(_ base: UnsafeMutablePointer<sqlite3_vtab_cursor>?) -> Cursor {
        UnsafeMutableRawPointer(base!).assumingMemoryBound(to: CursorBox.self).pointee.cursor.takeUnretainedValue()
    }

    private static func fail(_ base: UnsafeMutablePointer<sqlite3_vtab_cursor>?, _ error: Error) -> Int32 {
        let vtab = base!.pointee.pVtab!
        sqlite3_free(vtab.pointee.zErrMsg)
        let message = Array("event_archive: \(error)".utf8CString)
        let copy = sqlite3_malloc(Int32(message.count))!.assumingMemoryBound(to: CChar.self)
        message.withUnsafeBufferPointer { copy.initialize(from: $0.baseAddress!, count: message.count) }
        vtab.pointee.zErrMsg = copy
        return SQLITE_CORRUPT
    }

    private static let declaration = "CREATE TABLE x(" + columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ") + ")"

    nonisolated(unsafe) static let module: UnsafeMutablePointer<sqlite3_module> = {
        let module = UnsafeMutablePointer<sqlite3_module>.allocate(capacity: 1)
        module.initialize(to: sqlite3_module())
        module.pointee.iVersion = 1
        module.pointee.xCreate = nil  // eponymous only: no CREATE VIRTUAL TABLE
        module.pointee.xConnect = { db, aux, _, _, vtab, _ in
            let code = sqlite3_declare_vtab(db, EventArchiveTable.declaration)
            guard code == SQLITE_OK else { return code }
            let table = UnsafeMutablePointer<Table>.allocate(capacity: 1)
            table.initialize(to: Table(db: db!, context: Unmanaged<Context>.fromOpaque(aux!)))
            vtab!.pointee = UnsafeMutableRawPointer(table).assumingMemoryBound(to: sqlite3_vtab.self)
            return SQLITE_OK
        }
        module.pointee.xDisconnect = { vtab in
            let table = EventArchiveTable.table(vtab)
            table.pointee.context.takeUnretainedValue().finalizeStatements()
            table.deinitialize(count: 1)
            table.deallocate()
            return SQLITE_OK
        }
        module.pointee.xBestIndex = { _, info in
            let info = info!
            var argument: Int32 = 0
            var plan: Int32 = 0
            var seqEqual = false, seqBounded = false, timeBounded = false
            for i in 0..<Int(info.pointee.nConstraint) {
                let constraint = info.pointee.aConstraint[i]
                guard constraint.usable != 0,
                      constraint.iColumn == EventArchiveTable.seqColumn || constraint.iColumn == EventArchiveTable.timeColumn,
                      let op = EventArchiveTable.opCodes.firstIndex(of: Int32(constraint.op)), argument < 6
                else { continue }
                argument += 1
                info.pointee.aConstraintUsage[i].argvIndex = argument
                let onSeq = constraint.iColumn == EventArchiveTable.seqColumn
                plan |= (Int32(op) | (onSeq ? 0 : 8)) << (4 * (argument - 1))
                if onSeq { seqBounded = true; if op == 0 { seqEqual = true } } else { timeBounded = true }
            }
            let orderBy = (0..<Int(info.pointee.nOrderBy)).map { info.pointee.aOrderBy[$0] }
            if orderBy.count == 1, orderBy[0].iColumn == EventArchiveTable.seqColumn, orderBy[0].desc == 0 {
                info.pointee.orderByConsumed = 1
            } else if (1...2).contains(orderBy.count), orderBy[0].iColumn == EventArchiveTable.timeColumn, orderBy[0].desc == 0,
                      orderBy.count == 1 || (orderBy[1].iColumn == EventArchiveTable.seqColumn && orderBy[1].desc == 0) {
                info.pointee.orderByConsumed = 1
                plan |= 1 << 24
            }
            info.pointee.idxNum = plan | argument << 28
            if seqEqual {
                info.pointee.estimatedCost = 10
                info.pointee.estimatedRows = 1
                info.pointee.idxFlags = SQLITE_INDEX_SCAN_UNIQUE
            } else if seqBounded || timeBounded {
                info.pointee.estimatedCost = 10_000
                info.pointee.estimatedRows = 10_000
            } else {
                info.pointee.estimatedCost = 1e9
                info.pointee.estimatedRows = 100_000_000
            }
            return SQLITE_OK
        }
        module.pointee.xOpen = { vtab, out in
            let table = EventArchiveTable.table(vtab).pointee
            let box = UnsafeMutablePointer<CursorBox>.allocate(capacity: 1)
            box.initialize(to: CursorBox(cursor: .passRetained(Cursor(db: table.db, context: table.context.takeUnretainedValue()))))
            out!.pointee = UnsafeMutableRawPointer(box).assumingMemoryBound(to: sqlite3_vtab_cursor.self)
            return SQLITE_OK
        }
        module.pointee.xClose = { base in
            let box = UnsafeMutableRawPointer(base!).assumingMemoryBound(to: CursorBox.self)
            box.pointee.cursor.release()
            box.deinitialize(count: 1)
            box.deallocate()
            return SQLITE_OK
        }
        module.pointee.xFilter = { base, plan, _, argc, argv in
            var bounds = Bounds()
            let count = Int(plan >> 28)
            let inTimeOrder = plan & (1 << 24) != 0
            for i in 0..<min(count, Int(argc)) {
                let code = (plan >> (4 * Int32(i))) & 0xF
                bounds.apply(
                    column: code & 8 == 0 ? EventArchiveTable.seqColumn : EventArchiveTable.timeColumn,
                    op: EventArchiveTable.opCodes[Int(code & 7)], argv![i])
            }
            do {
                try EventArchiveTable.cursor(base).start(bounds, inTimeOrder: inTimeOrder)
                return SQLITE_OK
            } catch {
                return EventArchiveTable.fail(base, error)
            }
        }
        module.pointee.xNext = { base in
            do {
                try EventArchiveTable.cursor(base).advance()
                return SQLITE_OK
            } catch {
                return EventArchiveTable.fail(base, error)
            }
        }
        module.pointee.xEof = { base in EventArchiveTable.cursor(base).eof ? 1 : 0 }
        module.pointee.xColumn = { base, context, column in
            // Called for every column of every row read: no reference counting on the way.
            UnsafeMutableRawPointer(base!).assumingMemoryBound(to: CursorBox.self).pointee.cursor._withUnsafeGuaranteedRef { cursor in
                guard let unretained = cursor.unretainedBlock else {
                    sqlite3_result_null(context)
                    return SQLITE_OK
                }
                return unretained._withUnsafeGuaranteedRef { block in
                    guard column >= 0, Int(column) < block.columnCount else {
                        sqlite3_result_null(context)
                        return SQLITE_OK
                    }
                    let cell: EventBlock.Cell
                    do {
                        cell = try block.cell(row: cursor.row, column: Int(column))
                    } catch {
                        sqlite3_result_error(context, "event_archive: \(error)", -1)
                        return SQLITE_CORRUPT
                    }
                    if EventBlock.isNull(cell) {
                        sqlite3_result_null(context)
                    } else if EventBlock.isInteger(cell) {
                        sqlite3_result_int64(context, cell.number)
                    } else if EventBlock.isReal(cell) {
                        sqlite3_result_double(context, Double(bitPattern: UInt64(bitPattern: cell.number)))
                    } else {
                        block.bytes.withUnsafeBytes { bytes in
                            let start = bytes.baseAddress! + Int(cell.number)
                            if EventBlock.isText(cell) {
                                sqlite3_result_text(context, start.assumingMemoryBound(to: CChar.self), cell.length, EventArchiveTable.transient)
                            } else {
                                sqlite3_result_blob(context, start, cell.length, EventArchiveTable.transient)
                            }
                        }
                    }
                    return SQLITE_OK
                }
            }
        }
        module.pointee.xRowid = { base, rowid in
            let cursor = EventArchiveTable.cursor(base)
            rowid!.pointee = (try? cursor.block?.integer(row: cursor.row, column: Int(EventArchiveTable.seqColumn))) ?? 0
            return SQLITE_OK
        }
        return module
    }()

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension AppDatabase {
    /// Makes a connection of one's own to the events database (`linkpulse.sqlite`) able to read
    /// sealed events: registers `event_archive`, which the `events` view and every statement
    /// that reads old events use. A plain SQLite connection (the sqlite3 shell) reads
    /// `event_rows` and the quarantine, but the `events` view fails there with "no such table:
    /// main.event_archive" instead of leaving sealed events out. Call it from
    /// `Configuration.prepareDatabase`.
    public static func prepareEventsReader(_ db: Database) throws {
        try EventArchiveTable.register(in: db, statements: try SQLQueries.load().archive.table)
    }
}
