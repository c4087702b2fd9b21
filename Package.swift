// swift-tools-version:6.1
import PackageDescription

// Linkpulse builds and runs on Linux (tested on Debian 12, x86_64, with Swift 6.1 or newer): it
// calls Glibc and reads /proc for its memory and disk figures.
#if !os(Linux)
#error("Linkpulse builds and runs on Linux only: it calls Glibc and reads /proc.")
#endif

let package = Package(
    name: "linkpulse",
    products: [
        .executable(name: "linkpulse", targets: ["linkpulse"]),
    ],
    dependencies: [
        // One trait, not Hummingbird's two defaults: SwiftPM passes the defines of several traits in
        // an order that changes from one build plan to the next, which rebuilt Hummingbird and
        // everything above it on every other `swift build`. Linkpulse reads no swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Reads docs/openapi.yaml, the API's one description, to serve it as /openapi.json.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // The PostgreSQL store (`--database postgres://…`): several daemons on one database.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // TLS of the PostgreSQL store's own connection (the derived work's; the pool's comes with postgres-nio).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // An RFC 4180 reader: `linkpulse links import`, and the tests' independent reader of
        // the CSV exports.
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // QR codes of hosted links' short URLs.
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // Countries from an MMDB file (GeoLite2, DB-IP Lite) the operator points at.
        .systemLibrary(
            name: "CMaxMindDB",
            pkgConfig: "libmaxminddb",
            providers: [.apt(["libmaxminddb-dev"])]
        ),
        .target(
            name: "CSystemTuning",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .target(
            name: "LinkpulseDomain",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ],
            exclude: ["Embedded"],
            plugins: ["EmbedTextPlugin"]
        ),
        .target(
            name: "LinkpulseStore",
            dependencies: [
                "LinkpulseDomain",
                "CSystemTuning",
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            plugins: ["EmbedTextPlugin"]
        ),
        .target(
            name: "LinkpulseServer",
            dependencies: [
                "LinkpulseDomain",
                "LinkpulseStore",
                "CZlib",
                "CMaxMindDB",
                "CQRencode",
                "CSystemTuning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ],
            plugins: ["EmbedTextPlugin"]
        ),
        .executableTarget(
            name: "linkpulse",
            dependencies: [
                "LinkpulseServer",
                "LinkpulseStore",
                "LinkpulseDomain",
                "CSystemTuning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CSV", package: "CSV.swift"),
                // `linkpulse links check-domain` fetches a link domain's association files.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Build-time embedding of text files (SQL under queries/, the bot list) so the
        // binary carries them and runs from anywhere.
        .executableTarget(name: "embed-text"),
        .plugin(name: "EmbedTextPlugin", capability: .buildTool(), dependencies: ["embed-text"], path: "Sources/EmbedTextPlugin"),
        .testTarget(
            name: "LinkpulseDomainTests",
            dependencies: ["LinkpulseDomain", "TestSupport", .product(name: "Yams", package: "Yams")]
        ),
        // Tests only: child processes, and a throwaway PostgreSQL cluster (Debian's server).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "LinkpulseStoreTests",
            dependencies: [
                "LinkpulseStore",
                "TestSupport",
                "LinkpulseDomain",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "LinkpulseServerTests",
            dependencies: [
                "LinkpulseServer",
                "LinkpulseStore",
                "LinkpulseDomain",
                "linkpulse",
                "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CSV", package: "CSV.swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
