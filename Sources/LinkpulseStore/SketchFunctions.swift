import Foundation
import GRDB
import LinkpulseDomain

/// SQL functions over stored `VisitorSketch` blobs, registered on every connection that
/// reads or writes rollups.
enum SketchFunctions {
    /// `lp_sketch_union(a, b)`: the sketch of both (either may be NULL).
    static let union = DatabaseFunction("lp_sketch_union", argumentCount: 2, pure: true) { values in
        var sketch = sketch(values[0])
        sketch.merge(Self.sketch(values[1]))
        return sketch.isEmpty ? nil : Data(sketch.serialized)
    }

    /// `lp_merge_visitors(x)`: aggregate, the union of every non-NULL sketch (NULL if none).
    static let merge = DatabaseFunction("lp_merge_visitors", argumentCount: 1, pure: true, aggregate: MergeVisitors.self)

    static func register(in db: Database) {
        db.add(function: union)
        db.add(function: merge)
    }

    static func sketch(_ value: DatabaseValue) -> VisitorSketch {
        guard case .blob(let data) = value.storage else { return VisitorSketch() }
        return data.withUnsafeBytes { VisitorSketch(serialized: $0) }
    }

    struct MergeVisitors: DatabaseAggregate {
        var sketch = VisitorSketch()
        var any = false

        mutating func step(_ values: [DatabaseValue]) throws {
            guard case .blob = values[0].storage else { return }
            any = true
            sketch.merge(SketchFunctions.sketch(values[0]))
        }

        func finalize() throws -> (any DatabaseValueConvertible)? {
            any ? Data(sketch.serialized) : nil
        }
    }
}
