import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import OrientationCore
import OrientationProtocol
import SensorCore

/// `orientd check-resolver VECTORS.json`: runs resolver test vectors (resolver.md §1).
struct CheckResolverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-resolver",
        abstract: "Run interface-orientation resolver test vectors and report each step.",
        discussion: """
            VECTORS is a JSON file in the schema of resolver.md §1 ({"vectors": [{"id", "initial", \
            "steps": [{"action", "expect"}]}]}). Every vector runs on a fresh resolver; each step prints \
            one JSON line {"id", "step", "ok"} (step counts from 0), with "expected" and "actual" \
            holding the fields that differ when it fails. The last line is "N passed, M failed", \
            counting steps.

            Exit status: 0 when every step passed, 1 when any failed, 65 for a malformed file (the \
            vector and field are named), 66 when the file cannot be read.
            """
    )

    @Argument(help: ArgumentHelp("The vectors file.", valueName: "vectors.json"))
    var vectors: String

    @Flag(name: .customLong("failures-only"), help: "Print only the steps that failed (and the summary).")
    var failuresOnly = false

    func run() throws {
        let bytes: [UInt8]
        switch WholeFile.read(vectors) {
        case .success(let read): bytes = read
        case .failure(let reason):
            printError("orientd check-resolver: cannot read \(vectors): \(reason)")
            throw ExitCode(66)
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            printError("orientd check-resolver: \(vectors): not valid JSON: \(error.description)")
            throw ExitCode(65)
        }
        let file: ResolverVectorFile
        do {
            file = try ResolverVectorFile(json: json)
        } catch {
            printError("orientd check-resolver: \(vectors): \(error.description)")
            throw ExitCode(65)
        }
        let results = file.run()
        for result in results where !(failuresOnly && result.ok) {
            print(result.json.serialized)
        }
        let failed = results.filter { !$0.ok }.count
        print("\(results.count - failed) passed, \(failed) failed")
        if failed > 0 { throw ExitCode(1) }
    }
}
