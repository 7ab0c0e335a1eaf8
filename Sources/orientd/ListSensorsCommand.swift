import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import OrientationClient
import OrientationCore
import OrientationProtocol
import SensorCore
import SensorIO

/// `orientd list-sensors`: every accelerometer found and which one `auto` would choose.
struct ListSensorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-sensors",
        abstract:
            """
            List the sensors orientd can see (accelerometers, ambient light, proximity, compass) and which it \
            would use.
            """,
        discussion: """
            Local accelerometers are found through udev (IIO devices with x, y and z acceleration \
            channels); with --sensor ip:HOST the ones iiod serves on HOST are listed instead. For each: \
            sysfs path, device node, name, label and location, the mount matrix and where it came from, \
            the acquisition mode, sampling frequency and scale, and the length of one reading (9.81 m/s² \
            at rest; far from it, the scale is wrong and the daemon learns gravity at rest instead). The last part \
            says which sensor the \
            --sensor specification (default auto) selects, and why. Evdev accelerometers \
            (ID_INPUT_ACCELEROMETER) are listed after IIO ones and chosen only without one.

            Then the other sensors orientd serves, as iio-sensor-proxy does: ambient light (IIO polled \
            or buffered, applesmc), proximity (IIO polled, SW_FRONT_PROXIMITY switches) and the HID \
            compass, each with what is read and how often, and which of each kind is served (the first \
            that can be read); they are read only while a client claims them.

            When orientd runs (its socket is --socket, default $ORIENTD_SOCKET or /run/orientd/orientd.sock), \
            the sensor it uses is marked, with its status and every fault that holds now: which, since \
            when (UTC) and what was measured. Without a running daemon the listing says so: faults are \
            known to the daemon only, from the readings it has seen.

            Exit status: 0 (also when none is found), 64 bad options, 69 when iiod cannot be reached.
            """
    )

    @OptionGroup var sensorOptions: SensorOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "The running daemon's socket, asked for the faults of the sensor it uses "
                + "(default $ORIENTD_SOCKET or /run/orientd/orientd.sock).", valueName: "path"))
    var socket: String?

    func run() async throws {
        let configuration = try sensorOptions.configuration()
        var found: [(AccelerometerCandidate?, SensorDescription)] = []
        var kinds: [(description: KindSensorDescription, readable: Bool)] = []
        var gyroscopes: [GyroscopeDevice] = []
        var selection: AccelerometerSelection.Result
        switch configuration.specification {
        case .auto, .iioName, .iioDevice, .inputDevice:
            let udev: Udev
            do {
                udev = try Udev()
                let candidates = try AccelerometerDiscovery.localCandidates(udev: udev)
                found = candidates.map {
                    ($0, AccelerometerDiscovery.describe($0, udev: udev, configuration: configuration))
                }
                kinds = KindDiscovery.listing(udev: udev)
                gyroscopes = GyroscopeDiscovery.listing(udev: udev)
            } catch {
                printError("orientd list-sensors: \(error)")
                throw ExitCode(69)
            }
            selection = AccelerometerSelection.choose(from: found.compactMap(\.0), for: configuration.specification)
        case .network(let host):
            do {
                found = try AccelerometerDiscovery.networkCandidates(host: host, configuration: configuration).map {
                    ($0.0, $0.1)
                }
            } catch {
                printError("orientd list-sensors: cannot reach iiod on \(host): \(error.errnoDescription)")
                throw ExitCode(69)
            }
            selection = AccelerometerSelection.choose(from: found.compactMap(\.0), for: .auto)
        case .replay, .standardInput:
            do {
                let source = try SensorFactory.openSource(configuration)
                defer { source.shutdown() }
                for await event in source.events {
                    if case .available(let description) = event { found = [(nil, description)] }
                    break
                }
            } catch {
                printError("orientd list-sensors: \(error)")
                throw ExitCode(66)
            }
            selection = .init(chosen: nil, reason: "the mock sensor \(configuration.specification)", skipped: [])
        }
        let chosenID = selection.chosen?.deviceID
        let socketPath = socket ?? OrientationClient.defaultSocketPath(environment: ProcessInfo.processInfo.environment)
        let daemon = await Self.askDaemon(socket: socketPath)
        if json {
            print(
                try jsonText(
                    found: found, chosen: chosenID, selection: selection, specification: configuration.specification,
                    kinds: kinds, gyroscopes: gyroscopes,
                    daemon: daemon, socket: socketPath))
        } else {
            printText(
                found: found, chosen: chosenID, selection: selection, specification: configuration.specification,
                daemon: daemon)
            if configuration.specification.isLocal {
                printText(kinds: kinds)
                printText(gyroscopes: gyroscopes)
            }
            printText(daemon: daemon, socket: socketPath)
        }
    }

    /// The running daemon's state, from its hello; or why it could not be had (within 2 s).
    static func askDaemon(socket: String) async -> Result<DaemonState, DaemonUnreachable> {
        await withTaskGroup(of: Result<DaemonState, DaemonUnreachable>?.self) { group in
            group.addTask {
                do {
                    let client = try await OrientationClient.connect(path: socket)
                    let state = await client.helloState
                    await client.close()
                    return state.map { .success($0) } ?? .failure(DaemonUnreachable(reason: "it sent no state"))
                } catch {
                    return .failure(DaemonUnreachable(reason: "\(error)"))
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(2))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(DaemonUnreachable(reason: "no answer within 2 s"))
        }
    }

    struct DaemonUnreachable: Error {
        let reason: String
    }

    /// Where no daemon answered, the faults column is not silently empty: it says why.
    private func printText(daemon: Result<DaemonState, DaemonUnreachable>, socket: String) {
        print("")
        switch daemon {
        case .success(let state):
            let faults =
                state.faults.isEmpty
                ? "no faults" : "\(state.faults.count) fault\(state.faults.count == 1 ? "" : "s") (above)"
            print(
                "orientd (\(socket)): accelerometer \(state.sensorName ?? "none") \(state.sensor.rawValue), \(faults)")
        case .failure(let problem):
            print(
                "orientd does not answer on \(socket) (\(problem.reason)): its faults are not known; "
                    + "they are judged from the readings a running daemon sees")
        }
    }

    /// The first readable sensor of each kind is the one served.
    private static func served(_ kinds: [(description: KindSensorDescription, readable: Bool)]) -> Set<String> {
        var served: Set<String> = []
        var seen: Set<String> = []
        for (description, readable) in kinds where readable && seen.insert(description.kind).inserted {
            served.insert(description.kind + "/" + description.identifier)
        }
        return served
    }

    /// Gyroscopes in devices of their own (an IMU's shows under its accelerometer).
    private func printText(gyroscopes: [GyroscopeDevice]) {
        print("")
        if gyroscopes.isEmpty { print("No gyroscope in a device of its own.") }
        // The daemon reads the first whose rates can be converted.
        let read = gyroscopes.firstIndex { $0.notRead == nil }
        for (index, gyroscope) in gyroscopes.enumerated() {
            let mark =
                gyroscope.notRead != nil
                ? "  (not read)"
                : index == read ? "  ← read with the accelerometer while the device moves" : "  (another ranks first)"
            print("\(gyroscope.deviceID)  \(gyroscope.name): gyroscope\(mark)")
            if let notRead = gyroscope.notRead { print("  warning       \(notRead)") }
            for problem in gyroscope.problems { print("  warning       \(problem)") }
            print("  sysfs         \(gyroscope.syspath)")
            print("  mount matrix  \(gyroscope.mountMatrix.text) (\(gyroscope.mountMatrixOrigin))")
            print("  scale         \(gyroscope.scale.map { "\($0)" }.joined(separator: ", ")) rad/s per unit")
            let reading = gyroscope.bufferTrigger.map { "buffer in_anglvel_x, _y, _z, trigger \($0)" }
            print("  reading       \(reading ?? "polled: in_anglvel_x_raw, _y_raw, _z_raw")")
        }
    }

    private func printText(kinds: [(description: KindSensorDescription, readable: Bool)]) {
        print("")
        let served = Self.served(kinds)
        for kind in SensorKind.allCases {
            let ofKind = kinds.filter { $0.description.kind == kind.rawValue }
            guard !ofKind.isEmpty else {
                print("No \(kind) found.")
                continue
            }
            for (description, readable) in ofKind {
                let mark =
                    served.contains(description.kind + "/" + description.identifier)
                    ? "  ← served while claimed"
                    : readable ? "  (another ranks first)" : "  (cannot be read)"
                print("\(description.identifier)  \(description.name): \(kind)\(mark)")
                print("  sysfs         \(description.sysfsPath ?? "-")")
                print("  acquisition   \(description.acquisition.rawValue)")
                print("  reading       \(description.reading)")
                for problem in description.problems { print("  warning       \(problem)") }
            }
        }
    }

    private func printText(
        found: [(AccelerometerCandidate?, SensorDescription)], chosen: String?,
        selection: AccelerometerSelection.Result,
        specification: SensorSpecification, daemon: Result<DaemonState, DaemonUnreachable>
    ) {
        if found.isEmpty { print("No accelerometer found.") }
        for (candidate, description) in found {
            let mark = candidate != nil && candidate?.deviceID == chosen ? "  ← \(specification) uses this one" : ""
            print("\(description.identifier)  \(description.name)\(mark)")
            func row(_ key: String, _ value: String?) {
                guard let value else { return }
                print("  " + key + String(repeating: " ", count: max(1, 14 - key.count)) + value)
            }
            row("sysfs", description.sysfsPath)
            if case .success(let state) = daemon, state.sensorName == description.identifier {
                row("daemon", "in use: \(state.sensor.rawValue)" + (state.faults.isEmpty ? ", no faults" : ""))
                for fault in state.faults { row("fault", "\(fault.kind) since \(fault.since): \(fault.detail)") }
            }
            row("device node", description.deviceNode)
            row("label", description.label)
            if candidate != nil { row("location", "\(description.location.rawValue) (\(description.locationOrigin))") }
            row("mount matrix", "\(description.mountMatrix.text) (\(description.mountMatrixOrigin.rawValue))")
            for problem in description.mountMatrixProblems { row("warning", problem) }
            if let mode = description.acquisition {
                row(
                    "acquisition",
                    mode.rawValue + (description.trigger.map { " (trigger \($0))" } ?? "")
                        + (description.hasBuffer ? "" : ", no buffer"))
            }
            switch description.acquisition {
            case .poll? where MotionEvents.switches(among: description.powerFeatures) != nil:
                let enables =
                    MotionEvents.switches(among: description.powerFeatures)?.enables.joined(separator: ", ") ?? ""
                row(
                    "pacing",
                    "adaptive: the sampling rate while the device moves; at rest asleep on the motion interrupt "
                        + "(\(enables)), "
                            + """
                            with a check read every \(SamplingFrequencyChoice.text(MotionEvents.checkInterval)) s \
                            (polling at [sensor] rest-rate if it cannot be armed)
                            """
                )
            case .poll?:
                row(
                    "pacing",
                    """
                    adaptive polling: the sampling rate while the device moves; at rest [sensor] held-rate \
                    (default \(SamplingFrequencyChoice.text(SamplingPace.Settings().heldRate)) Hz) while it \
                    sways in a hand, [sensor] rest-rate (default \
                    \(SamplingFrequencyChoice.text(SamplingPace.Settings().restRate)) Hz) while it lies still
                    """
                )
            case .buffer? where description.restPacing != nil:
                row("pacing", "adaptive: every report while the device moves; at rest \(description.restPacing ?? "")")
            case .buffer?:
                row(
                    "pacing",
                    "adaptive: one sample per read while the device moves; at rest the buffer hands over batches of "
                        + "[sensor] rest-rate's interval (buffer/watermark"
                        + (description.powerFeatures.contains("buffer/hwfifo_watermark_max")
                            ? ", and the hardware FIFO" : "") + ")"
                )
            case .auto?, nil:
                break
            }
            if !description.powerFeatures.isEmpty {
                row("hardware", description.powerFeatures.joined(separator: ", "))
            }
            row("gyroscope", description.gyroscope)
            let frequency =
                description.samplingFrequency.map { "\(SamplingFrequencyChoice.text($0)) Hz" } ?? "not reported"
            row("sampling", frequency + (description.availableFrequencies.map { " (available: \($0))" } ?? ""))
            if let scale = description.scale {
                row(
                    "scale",
                    scale.map { $0.map { "\($0)" } ?? "invalid" }.joined(separator: ", ") + " m/s² per unit (x, y, z)")
            }
            if let offset = description.offset {
                row("offset", offset.map { $0.map { "\($0)" } ?? "invalid" }.joined(separator: ", "))
            }
            if let magnitude = description.readingMagnitude {
                let g = (magnitude / 9.81 * 100).rounded() / 100
                let text = "\((magnitude * 100).rounded() / 100) m/s² now (\(g) g)"
                if abs(magnitude / 9.81 - 1) > GravityScaleLearner(gravity: 9.81).tolerance, magnitude > 0 {
                    let factor = (9.81 / magnitude * 1e5).rounded() / 1e5
                    row(
                        "gravity",
                        text + ": at rest that means a wrong or missing scale; the daemon measures gravity at rest and "
                            + """
                            multiplies the readings by 9.81 m/s² over it (\(factor) for this reading), and says \
                            so once in its log
                            """
                    )
                } else {
                    row("gravity", text)
                }
            }
        }
        if !found.isEmpty || !selection.skipped.isEmpty { print("") }
        print("\(specification): \(selection.reason)")
        for skipped in selection.skipped { print("  skipped \(skipped)") }
    }

    private func jsonText(
        found: [(AccelerometerCandidate?, SensorDescription)], chosen: String?,
        selection: AccelerometerSelection.Result,
        specification: SensorSpecification, kinds: [(description: KindSensorDescription, readable: Bool)],
        gyroscopes: [GyroscopeDevice],
        daemon: Result<DaemonState, DaemonUnreachable>, socket: String
    ) throws -> String {
        /// What the running daemon says of its accelerometer; `running` false with the reason otherwise.
        struct DaemonEntry: Encodable {
            struct Fault: Encodable {
                let kind, device, detail, since: String
            }
            let socket: String
            let running: Bool
            let reason: String?
            let sensor: String?
            let status: String?
            let faults: [Fault]
        }
        /// A light, proximity or compass sensor: its description, whether it can be read, whether it is served.
        struct KindEntry: Encodable {
            let sensor: KindSensorDescription
            let readable: Bool
            let served: Bool
            func encode(to encoder: any Encoder) throws {
                try sensor.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(readable, forKey: .readable)
                try container.encode(served, forKey: .served)
            }
            enum Key: String, CodingKey { case readable, served }
        }
        struct Entry: Encodable {
            let sensor: SensorDescription
            let chosen: Bool
            func encode(to encoder: any Encoder) throws {
                try sensor.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(chosen, forKey: .chosen)
            }
            enum Key: String, CodingKey { case chosen }
        }
        /// `selected` is always present (null when nothing is selected), so scripts can rely on it.
        struct Listing: Encodable {
            let sensors: [Entry]
            let specification: String
            let selected: String?
            let reason: String
            let skipped: [String]
            let kinds: [KindEntry]
            /// Gyroscopes in devices of their own, the one read first.
            let gyroscopes: [GyroscopeDevice]
            let daemon: DaemonEntry

            enum Key: String, CodingKey {
                case sensors, specification, selected, reason, skipped, kinds, gyroscopes, daemon
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(sensors, forKey: .sensors)
                try container.encode(specification, forKey: .specification)
                try container.encode(selected, forKey: .selected)
                try container.encode(reason, forKey: .reason)
                try container.encode(skipped, forKey: .skipped)
                try container.encode(kinds, forKey: .kinds)
                try container.encode(gyroscopes, forKey: .gyroscopes)
                try container.encode(daemon, forKey: .daemon)
            }
        }
        let daemonEntry: DaemonEntry =
            switch daemon {
            case .success(let state):
                DaemonEntry(
                    socket: socket, running: true, reason: nil, sensor: state.sensorName, status: state.sensor.rawValue,
                    faults: state.faults.map {
                        .init(kind: $0.kind, device: $0.device, detail: $0.detail, since: $0.since)
                    })
            case .failure(let problem):
                DaemonEntry(
                    socket: socket, running: false, reason: problem.reason, sensor: nil, status: nil, faults: [])
            }
        let listing = Listing(
            sensors: found.map { Entry(sensor: $0.1, chosen: $0.0 != nil && $0.0?.deviceID == chosen) },
            specification: specification.description, selected: chosen, reason: selection.reason,
            skipped: selection.skipped,
            kinds: kinds.map {
                KindEntry(
                    sensor: $0.description, readable: $0.readable,
                    served: Self.served(kinds).contains($0.description.kind + "/" + $0.description.identifier))
            },
            gyroscopes: gyroscopes, daemon: daemonEntry)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A sensor may read NaN or infinity: listed as such, not a failed listing.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: try encoder.encode(listing), as: UTF8.self)
    }
}
