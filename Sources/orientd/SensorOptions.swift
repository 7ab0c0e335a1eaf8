import ArgumentParser
import OrientationCore
import SensorCore

/// `--sensor`, `--mount-matrix`, `--rate`, `--acquisition`: the same for every command that reads a
/// sensor.
struct SensorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Which accelerometer: \(SensorSpecification.grammar).", valueName: "spec"))
    var sensor = "auto"

    @Option(name: .customLong("mount-matrix"), help: ArgumentHelp(
        "Sensor-to-display matrix, rows separated by ';' (device = M · raw); overrides udev and sysfs.",
        valueName: "a, b, c; d, e, f; g, h, i"))
    var mountMatrixText: String?

    @Option(help: ArgumentHelp("Sampling rate to request in Hz; the nearest rate the device offers is used.", valueName: "hz"))
    var rate: Double = SensorConfiguration.defaultRate

    @Option(help: ArgumentHelp("How to read an IIO device: auto (buffer when it has a trigger, else poll), poll, buffer.", valueName: "mode"))
    var acquisition: AcquisitionMode = .auto

    func validate() throws {
        _ = try configuration()
    }

    func configuration() throws -> SensorConfiguration {
        let specification: SensorSpecification
        do {
            specification = try SensorSpecification(parsing: sensor)
        } catch {
            throw ValidationError("--sensor: \(error.description)")
        }
        var matrix: MountMatrix?
        if let mountMatrixText {
            do {
                matrix = try MountMatrix(parsing: mountMatrixText)
            } catch {
                throw ValidationError("--mount-matrix: \(error.description)")
            }
        }
        guard rate.isFinite, rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be a number of Hz in (0, 10000], got \(rate)") }
        return SensorConfiguration(specification: specification, mountMatrix: matrix, rate: rate, acquisition: acquisition)
    }
}

extension AcquisitionMode: ExpressibleByArgument {}
