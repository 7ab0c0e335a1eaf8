import Foundation
import OrientationDaemon
import Testing

/// The settings table and the `serve` command's options are declared apart (argument-parser's
/// options are properties); this keeps them from drifting.
@Suite("orientd serve")
struct ServeCommandTests {
    @Test("--help offers every setting that has an option, with the table's help")
    func everySettingHasItsOption() throws {
        let result = try OrientdProcess.run(["serve", "--help"])
        #expect(result.status == 0)
        let help = result.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in DaemonSetting.all {
            guard let option = setting.option else { continue }
            #expect(
                help.contains("--\(option)"),
                "--\(option) ([\(setting.table)] \(setting.key)) is not an option of serve")
            let firstWords = setting.optionHelp.split(whereSeparator: \.isWhitespace).prefix(4).joined(separator: " ")
            #expect(help.contains(firstWords), "--\(option)'s help is not the table's: \(firstWords)")
        }
    }

    @Test("an option with a fixed set of values refuses another with the list, and completion offers them")
    func fixedValuesAreTyped() throws {
        // The settings whose values are one of a list: the table says which (its expected form).
        let choices = DaemonSetting.all.compactMap { setting -> (option: String, values: [String])? in
            guard let option = setting.option, setting.expected.hasPrefix("a string: "),
                !setting.expected.contains("("),
                !setting.expected.contains("/")
            else { return nil }
            let values = setting.expected.dropFirst("a string: ".count).split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            return values.allSatisfy { !$0.contains(" ") } ? (option, values) : nil
        }
        #expect(choices.map(\.option).sorted() == ["acquisition", "dbus", "idiom", "log-level", "tablet-mode-switch"])
        let completion = try OrientdProcess.run(["--generate-completion-script", "bash"]).standardOutput
        for (option, values) in choices {
            let refused = try OrientdProcess.run(["serve", "--\(option)", "nonsense"])
            #expect(refused.status == 64, "--\(option) nonsense")
            #expect(values.allSatisfy(refused.standardError.contains), "--\(option): \(refused.standardError)")
            #expect(
                completion.contains(values.map { "'\($0)'" }.joined(separator: "$'\\n'")),
                "bash completion of --\(option)")
        }
    }
}
