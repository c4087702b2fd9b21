import Foundation
import GRDB
import LinkpulseDomain

/// The SQL function over stored `VisitorSketch` blobs that rollup upserts use, registered on
/// every connection that reads or writes rollups.
enum SketchFunctions {
    /// `lp_sketch_union(a, b)`: the sketch of both (either may be NULL).
    static let union = DatabaseFunction("lp_sketch_union", argumentCount: 2, pure: true) { values in
        var sketch = sketch(values[0])
        sketch.merge(Self.sketch(values[1]))
        return sketch.isEmpty ? nil : Data(sketch.serialized)
    }

    static func register(in db: Database) {
        db.add(function: union)
    }

    static func sketch(_ value: DatabaseValue) -> VisitorSketch {
        guard case .blob(let data) = value.storage else { return VisitorSketch() }
        return data.withUnsafeBytes { VisitorSketch(serialized: $0) }
    }
}
