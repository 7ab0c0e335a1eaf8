import ArgumentParser
import OrientationCore
import OrientationDaemon
import SensorCore

/// `--sensor`, `--mount-matrix`, `--rate`, `--acquisition`: the same for every command that reads a
/// sensor.
struct SensorOptions: ParsableArguments {
    @Option(name: .customLong("sensor"), help: SettingHelp.of("sensor"))
    var sensor: String?

    @Option(name: .customLong("mount-matrix"), help: SettingHelp.of("mount-matrix"))
    var mountMatrixText: String?

    @Option(name: .customLong("rate"), help: SettingHelp.of("rate"))
    var rate: String?

    @Option(name: .customLong("acquisition"), help: SettingHelp.of("acquisition"))
    var acquisition: AcquisitionMode?

    /// The options given, by their settings.
    var given: [(option: String, value: String?)] {
        [("sensor", sensor), ("mount-matrix", mountMatrixText), ("rate", rate), ("acquisition", acquisition?.rawValue)]
    }

    func validate() throws {
        _ = try configuration()
    }

    /// The options given, over `base` (the defaults, or the configuration file's values).
    func configuration(base: SensorConfiguration = SensorConfiguration()) throws -> SensorConfiguration {
        var settings = ServeSettings()
        settings.sensor = base
        try SettingHelp.apply(given, to: &settings)
        return settings.sensor
    }
}

/// Options named, explained and parsed by their ``DaemonSetting``.
enum SettingHelp {
    static func of(_ option: String) -> ArgumentHelp {
        let setting = DaemonSetting.option(option)
        return ArgumentHelp(setting.optionHelp, valueName: setting.valueName)
    }

    /// Applies every option given through its setting; the first bad one is the error.
    static func apply(
        _ given: [(option: String, value: String?)], to settings: inout ServeSettings
    ) throws(ValidationError) {
        for (option, value) in given {
            guard let value else { continue }
            do {
                try DaemonSetting.option(option).apply(argument: value, to: &settings)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }
}
