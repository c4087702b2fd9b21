import ArgumentParser

/// The `linkpulse` command: the composition root. Subcommands wire real parts together and
/// hand them to the builders in LinkpulseServer and LinkpulseStore.
@main
struct Linkpulse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "linkpulse",
        abstract: "Self-hosted link analytics: ingest, rollups, stats, dashboard, exports.",
        discussion: "Every option can also be set with a LINKPULSE_… environment variable: the option's name in capitals with - as _ (--data-dir → LINKPULSE_DATA_DIR). A flag given on the command line wins.",
        subcommands: [Serve.self, Migrate.self, Rollup.self, Generate.self, Export.self, Keys.self, Links.self, Backup.self, Restore.self, Copy.self],
        defaultSubcommand: Serve.self
    )
}
