import Foundation
import PackagePlugin

/// Embeds text files into the target as `EmbeddedText.files` (relative path → contents), so the
/// `linkpulse` binary carries its SQL and data files and runs from any directory.
///
/// What a target embeds: every file under its own `Embedded/` folder; for the store target,
/// every file under the package's `queries/` folder; for the server target, the OpenAPI
/// document `docs/openapi.yaml` (as `openapi.yaml`).
@main
struct EmbedTextPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        var roots: [URL] = [target.directoryURL.appending(path: "Embedded")]
        if target.name == "LinkpulseStore" {
            roots.append(context.package.directoryURL.appending(path: "queries"))
        }
        if target.name == "LinkpulseServer" {
            roots.append(context.package.directoryURL.appending(path: "docs/openapi.yaml"))
        }
        let inputs = roots.flatMap(Self.files(under:))
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedText.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) text files into \(target.name)",
                executable: try context.tool(named: "embed-text").url,
                arguments: [output.path()] + roots.map { $0.path() },
                inputFiles: inputs,
                outputFiles: [output]
            ),
        ]
    }

    static func files(under root: URL) -> [URL] {
        if (try? root.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { return [root] }
        guard let walker = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]
        ) else { return [] }
        return walker.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }
}
