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
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: vectors))
        } catch {
            printError("orientd check-resolver: cannot read \(vectors): \(String(cString: strerror(errno)))")
            throw ExitCode(66)
        }
        let file: ResolverVectorFile
        do {
            file = try ResolverVectorFile(json: try JSONValue.parse(data))
        } catch let error as JSONFieldError {
            printError("orientd check-resolver: \(vectors): \(error)")
            throw ExitCode(65)
        } catch {
            printError("orientd check-resolver: \(vectors): not valid JSON: \(describeJSONError(error))")
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

/// The JSON decoder's errors carry the position in the underlying error; bring it out.
func describeJSONError(_ error: any Error) -> String {
    if case DecodingError.dataCorrupted(let context) = error {
        return context.underlyingError.map { "\($0)" } ?? context.debugDescription
    }
    return "\(error)"
}
