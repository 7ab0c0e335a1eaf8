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
            #expect(help.contains("--\(option)"), "--\(option) ([\(setting.table)] \(setting.key)) is not an option of serve")
            let firstWords = setting.optionHelp.split(whereSeparator: \.isWhitespace).prefix(4).joined(separator: " ")
            #expect(help.contains(firstWords), "--\(option)'s help is not the table's: \(firstWords)")
        }
    }
}
