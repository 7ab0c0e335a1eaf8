import ArgumentParser
import OrientationCore
import SensorCore

/// `--sensor`, `--mount-matrix`, `--rate`, `--acquisition`: the same for every command that reads a
/// sensor.
struct SensorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Which accelerometer (default auto): \(SensorSpecification.grammar).", valueName: "spec"))
    var sensor: String?

    @Option(name: .customLong("mount-matrix"), help: ArgumentHelp(
        "Sensor-to-display matrix, rows separated by ';' (device = M · raw); overrides udev and sysfs.",
        valueName: "a, b, c; d, e, f; g, h, i"))
    var mountMatrixText: String?

    @Option(help: ArgumentHelp("Sampling rate to request in Hz (default 25); the nearest rate the device offers is used.", valueName: "hz"))
    var rate: Double?

    @Option(help: ArgumentHelp("How to read an IIO device: auto (default: buffer when it has a trigger, else poll), poll, buffer.", valueName: "mode"))
    var acquisition: AcquisitionMode?

    func validate() throws {
        _ = try configuration()
    }

    /// The options given, over `base` (the defaults, or the configuration file's values).
    func configuration(base: SensorConfiguration = SensorConfiguration()) throws -> SensorConfiguration {
        var result = base
        if let sensor {
            do {
                result.specification = try SensorSpecification(parsing: sensor)
            } catch {
                throw ValidationError("--sensor: \(error.description)")
            }
        }
        if let mountMatrixText {
            do {
                result.mountMatrix = try MountMatrix(parsing: mountMatrixText)
            } catch {
                throw ValidationError("--mount-matrix: \(error.description)")
            }
        }
        if let rate {
            guard rate.isFinite, rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be a number of Hz in (0, 10000], got \(rate)") }
            result.rate = rate
        }
        if let acquisition { result.acquisition = acquisition }
        return result
    }
}

extension AcquisitionMode: ExpressibleByArgument {}
