import ArgumentParser
import DesktopIntegration
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import OrientationClient
import OrientationCore
import OrientationProtocol
import SensorCore
import SensorIO

/// `orientd calibrate`: the mount-matrix wizard. The person holds the device in three poses; the
/// raw readings of each give the matrix, which becomes a hwdb entry for systemd.
struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Find the sensor's mount matrix from three poses and make it a hwdb entry (--write installs it).",
        discussion: """
            For a screen that rotates the wrong way: the sensor is mounted turned in the case and the \
            hwdb has no ACCEL_MOUNT_MATRIX for it. The wizard names the sensor and the matrix in use \
            (and where it came from), then asks for three poses: portrait (upright, top edge up), \
            landscape with the left edge down, and flat, screen up. A pose is captured once the device \
            has been still in it for a second (rest it against something) and it is not a pose already \
            captured; the pose just captured may stay while you read the next prompt.

            The result: the mount matrix (a signed axis permutation when every capture is within 10° of \
            one, else the best rotation, with a warning), how far each capture is from its pose, and the \
            entry in systemd's hwdb format, keyed by the sensor's parent modalias and the machine's DMI \
            vendor and product (and the sensor's label where it has one). When the matrix in use is \
            already right it says so and writes nothing.

            --write installs the entry in /etc/udev/hwdb.d/61-sensor-local.hwdb (replacing an earlier \
            entry of its own for the same device, keeping everything else), runs systemd-hwdb update and \
            udevadm trigger for the device, so a running orientd re-reads the sensor, and says how to \
            send the entry to systemd. With --root the files go under another root (an image being \
            built) and udevadm trigger is left out.

            It reads the sensor beside a running orientd (by polling, unless --acquisition says \
            otherwise, and at the device's rate as it is, unless --rate is given) and works with any \
            --sensor, ip: and replay: included; only a local sensor can be written to the hwdb. For a convertible's \
            base sensor, close the lid and hold the closed \
            device in the same poses: the base must then read what the display reads.

            --json prints one JSON object per line: {"sensor": …} first, {"step": POSE, "state": \
            "waiting"} for each pose asked for, {"step": POSE, "state": "captured", "vector": [x, y, z]} \
            (raw m/s²), {"step": POSE, "state": "rejected", "reason": …}, and at the end {"matrix": \
            "a, b, c; d, e, f; g, h, i", "hwdb": …, …}; on failure {"error": …}.

            Exit status: 0 success (also when the matrix in use is right), 1 the wizard could not \
            finish (no still pose in time, the sensor went away, the readings ended, interrupted), \
            64 bad options, 66 a trace to replay cannot be read, 69 no sensor, 73 the hwdb cannot be \
            written or updated.
            """
    )

    @OptionGroup var sensorOptions: SensorOptions

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Flag(help: "Install the hwdb entry, update the hwdb and re-read the device.")
    var write = false

    @Option(
        help: ArgumentHelp(
            "Write the hwdb under this root instead of / (no udevadm trigger then).", valueName: "directory"))
    var root = "/"

    @Option(help: ArgumentHelp("Give up on a pose after this many seconds.", valueName: "seconds"))
    var timeout = 90.0

    func validate() throws {
        guard timeout.isFinite, timeout >= 2 else { throw ValidationError("--timeout must be a number of seconds ≥ 2") }
        guard root.hasPrefix("/") else { throw ValidationError("--root must be an absolute path, not \(root)") }
    }

    func run() async throws {
        var sensorConfiguration = try sensorOptions.configuration()
        // Polling reads beside a daemon that holds the sensor's buffer, and the device's rate is
        // the daemon's to choose.
        if sensorOptions.acquisition == nil { sensorConfiguration.acquisition = .poll }
        if sensorOptions.rate == nil { sensorConfiguration.setsDeviceRate = false }
        let output = CalibrationOutput(json: json)
        let source: any AccelerometerSource
        do {
            source = try SensorFactory.openSource(sensorConfiguration)
        } catch {
            output.fail("\(error)")
            if case .trace = error { throw ExitCode(66) }
            throw ExitCode(69)
        }
        let signals = shutDownOnSignals(source)
        defer { signals.forEach { $0.cancel() } }

        var poses = PoseCaptureConfiguration()
        poses.poseTimeout = timeout
        var capture = PoseCapture(configuration: poses)
        var sensor: SensorDescription?
        var outcome: Result<[PoseCapture.Capture], CalibrationFailure>?
        var faultLog = FaultLogLimiter()
        source.startSampling()
        events: for await event in source.events {
            switch event {
            case .available(let description):
                if let sensor, sensor.identifier != description.identifier {
                    outcome = .failure(
                        .init(
                            """
                            the sensor changed from \(sensor.identifier) to \(description.identifier) mid-way; \
                            start again
                            """
                        ))
                    break events
                }
                guard sensor == nil else { continue }
                sensor = description
                output.sensor(description)
                output.show(capture.start(at: MonotonicClock.now()))
            case .unavailable(let reason):
                outcome = .failure(
                    .init(
                        sensor.map { "the sensor \($0.identifier) went away: \(reason)" } ?? "no sensor: \(reason)",
                        exitCode: sensor == nil ? 69 : 1))
                break events
            case .sample(let sample):
                for step in capture.observe(time: sample.time, reading: sample.reading) {
                    switch step {
                    case .finished(let captures): outcome = .success(captures)
                    case .failed(let reason): outcome = .failure(.init(reason))
                    default: output.show([step])
                    }
                }
                if outcome != nil { break events }
            case .fault(let fault):
                if faultLog.logFault(fault.kind, at: MonotonicClock.now()) { output.note("sensor fault: \(fault)") }
            case .recovered(let kind, let device):
                if faultLog.logRecovery(kind) { output.note("\(device): \(kind.rawValue) recovered") }
            case .note(let note):
                output.note(note)
            case .ended:
                outcome = .failure(
                    .init("the readings ended while waiting for \(capture.currentPose?.rawValue ?? "a pose")"))
                break events
            }
        }
        source.shutdown()
        let captures: [PoseCapture.Capture]
        switch outcome {
        case .success(let done)?:
            captures = done
        case .failure(let failure)?:
            output.fail(failure.message)
            throw ExitCode(failure.exitCode)
        case nil:
            output.fail("interrupted while waiting for \(capture.currentPose?.rawValue ?? "the sensor")")
            throw ExitCode(1)
        }
        guard let sensor, let fit = MountFit.fit(captures) else {
            output.fail("the captured poses do not fix the three axes; start again")
            throw ExitCode(1)
        }
        try await finish(
            fit: fit, captures: captures, sensor: sensor, specification: sensorConfiguration.specification,
            output: output)
    }

    private func finish(
        fit: MountFit, captures: [PoseCapture.Capture], sensor: SensorDescription,
        specification: SensorSpecification, output: CalibrationOutput
    ) async throws {
        let inUseWorst = MountFit.errors(of: sensor.mountMatrix, captures).max() ?? 180
        let alreadyRight =
            sensor.mountMatrix == fit.matrix || (fit.isSignedPermutation && inUseWorst <= MountFit.permutationTolerance)
        // The hwdb names local devices only: a trace or a remote iiod has no udev identity here.
        var identity: SensorHwdbEntry.Identity?
        var identityProblem: String?
        if specification.isLocal, let path = sensor.sysfsPath {
            do throws(SensorIdentityLookup.Failure) {
                identity = try SensorIdentityLookup.identity(sysfsPath: path)
            } catch {
                identityProblem = error.description
            }
        } else {
            identityProblem = "\(sensor.identifier) is not a local IIO device, so it has no udev identity for the hwdb"
        }
        let entry = identity.map { identity in
            SensorHwdbEntry(
                identity: identity, matrix: fit.matrix,
                comment: [
                    "\(sensor.name) (\(sensor.identifier)): orientd calibrate, every pose within "
                        + "\(PoseCapture.degrees(fit.worstError)) of the matrix"
                ])
        }
        output.result(
            fit: fit, sensor: sensor, alreadyRight: alreadyRight, entry: entry, identityProblem: identityProblem)
        guard write else { return }
        if alreadyRight {
            output.note("the matrix in use is right: nothing written")
            return
        }
        guard let entry, let path = sensor.sysfsPath else {
            output.fail("--write: \(identityProblem ?? "no hwdb entry")")
            throw ExitCode(73)
        }
        do throws(CalibrationFailure) {
            let installed = try HwdbInstaller(root: root).install(entry)
            output.written(installed)
            if root == "/" {
                // Then settle with a bound: `trigger --settle` waits forever where no udevd runs
                // (a container, a chroot).
                let trigger = ExternalCommand.run(["udevadm", "trigger", "--action=change", path])
                if trigger.status == 0 { _ = ExternalCommand.run(["udevadm", "settle", "--timeout=10"]) }
                if trigger.status == 0 {
                    output.note("udevadm trigger --action=change \(path): udev re-read the device")
                    await reportDaemon(sensor: sensor, output: output)
                } else {
                    output.note(
                        """
                        warning: udevadm trigger failed (\(trigger.summary)): the entry applies from the next \
                        boot, or run: udevadm trigger -v -p DEVNAME=\(sensor.deviceNode ?? path)
                        """
                    )
                }
            } else {
                output.note("--root \(root): udevadm trigger left out (not the running system)")
            }
            output.advise(Self.submitAdvice)
        } catch {
            output.fail(error.message)
            throw ExitCode(error.exitCode)
        }
    }

    /// Whether an orientd answers on its socket, and what the change means for it: it watches udev
    /// and re-reads its sensor on the change event the trigger caused.
    private func reportDaemon(sensor: SensorDescription, output: CalibrationOutput) async {
        let socket = OrientationClient.defaultSocketPath(environment: ProcessInfo.processInfo.environment)
        guard let client = try? await OrientationClient.connect(path: socket) else {
            output.note("no orientd answers on \(socket): it uses the new matrix when it starts")
            return
        }
        let state = try? await client.state()
        await client.close()
        if let name = state?.sensorName, name != sensor.identifier {
            output.note("orientd on \(socket) reads \(name), not \(sensor.identifier): its matrix is unchanged")
        } else {
            output.note(
                """
                orientd on \(socket) re-reads \(sensor.identifier) on udev's change event and uses the new matrix \
                now (its log says \"mount matrix changed\")
                """
            )
        }
    }

    static let submitAdvice = """
        So that the next owner of this device never sees the problem: send the entry to systemd, as a pull \
        request adding it to hwdb.d/60-sensor.hwdb at https://github.com/systemd/systemd, or as an issue \
        at https://github.com/systemd/systemd/issues with the entry, a description of the device and the \
        output of `udevadm info --export-db` (what 60-sensor.hwdb's header asks for).
        """
}

/// Why the wizard stops, and its exit status.
struct CalibrationFailure: Error {
    var message: String
    var exitCode: Int32 = 1

    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
}

/// Installs an entry in `ROOT/etc/udev/hwdb.d/61-sensor-local.hwdb` and compiles the hwdb; on any
/// failure the file is as it was before.
struct HwdbInstaller {
    var root: String

    var directory: String { (root == "/" ? "" : root) + "/etc/udev/hwdb.d" }
    var path: String { directory + "/61-sensor-local.hwdb" }

    /// Writes the file (a new file renamed over the old one), runs `systemd-hwdb update`, and
    /// restores the old file if that fails. Returns the path written.
    func install(_ entry: SensorHwdbEntry) throws(CalibrationFailure) -> String {
        if let problem = Self.makeDirectories(directory) {
            throw CalibrationFailure("cannot create \(directory): \(problem)", exitCode: 73)
        }
        let previous = Self.read(path)
        try Self.replace(path, with: entry.installed(in: previous))
        let update = ExternalCommand.run(["systemd-hwdb", "update"] + (root == "/" ? [] : ["--root=\(root)"]))
        guard update.status == 0 else {
            // Nothing half-done: the old file back (or none), so the hwdb stays what it compiled from.
            if let previous { try? Self.replace(path, with: previous) } else { unlink(path) }
            throw CalibrationFailure(
                "systemd-hwdb update failed (\(update.summary)); \(path) is as it was", exitCode: 73)
        }
        return path
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to a temporary file beside `path`, then renames it over `path`.
    private static func replace(_ path: String, with text: String) throws(CalibrationFailure) {
        let temporary = path + ".orientd-new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CalibrationFailure("cannot write \(temporary): \(String(cString: strerror(errno)))", exitCode: 73)
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CalibrationFailure("cannot write \(path): \(reason)", exitCode: 73)
        }
    }

    /// `mkdir -p`; the first error, or nil.
    private static func makeDirectories(_ path: String) -> String? {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST { return "\(prefix): \(String(cString: strerror(errno)))" }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { return String(cString: strerror(errno)) }
        return (status.st_mode & S_IFMT) == S_IFDIR ? nil : "\(path) is not a directory"
    }
}

/// What the wizard says: text for a person (with a live stillness bar on a terminal) or JSON lines.
final class CalibrationOutput {
    let json: Bool
    private let terminal = isatty(STDOUT_FILENO) == 1
    private var barShown = false
    private var lastBar = -2

    init(json: Bool) {
        self.json = json
    }

    func sensor(_ description: SensorDescription) {
        if json {
            line(
                .object([
                    ("sensor", .string(description.identifier)), ("name", .string(description.name)),
                    ("inUse", .string(description.mountMatrix.text)),
                    ("origin", .string(description.mountMatrixOrigin.rawValue)),
                ]))
        } else {
            say(
                """
                Sensor: \(description.identifier) \
                (\(description.name))\(description.sysfsPath.map { ", \($0)" } ?? "")
                """
            )
            say("Mount matrix in use: \(description.mountMatrix.text) (from \(description.mountMatrixOrigin.rawValue))")
        }
    }

    func show(_ events: [PoseCaptureEvent]) {
        for event in events {
            switch event {
            case .waiting(let pose):
                if json {
                    line(.object([("step", .string(pose.rawValue)), ("state", .string("waiting"))]))
                } else {
                    say("\n\(Self.prompt(pose))")
                }
            case .stillness(_, let fraction, let moved):
                guard !json, terminal else { continue }
                // Resting in the pose from before the prompt: an empty bar and a nudge.
                let filled = moved ? Int((fraction * 20).rounded(.down)) : -1
                guard filled != lastBar else { continue }
                lastBar = filled
                let bar =
                    String(repeating: "#", count: max(filled, 0)) + String(repeating: ".", count: 20 - max(filled, 0))
                let words = filled < 0 ? "turn the device to the pose" : filled == 0 ? "moving or shaking" : "hold it…"
                emit("\r  still [\(bar)] \(words)         ")
                barShown = true
            case .captured(let pose, let reading):
                if json {
                    line(
                        .object([
                            ("step", .string(pose.rawValue)), ("state", .string("captured")),
                            ("vector", .array([reading.x, reading.y, reading.z].map { .number(Self.round($0)) })),
                        ]))
                } else {
                    say("  captured \(pose.rawValue): raw (\(Self.text(reading)))")
                }
            case .rejected(let pose, let reason):
                if json {
                    line(
                        .object([
                            ("step", .string(pose.rawValue)), ("state", .string("rejected")),
                            ("reason", .string(reason)),
                        ]))
                } else {
                    say("  not taken: \(reason)")
                }
            case .finished, .failed:
                break
            }
        }
    }

    func result(
        fit: MountFit, sensor: SensorDescription, alreadyRight: Bool, entry: SensorHwdbEntry?, identityProblem: String?
    ) {
        if json {
            var members: [(key: String, value: JSONValue)] = [
                ("matrix", .string(fit.matrix.text)),
                ("hwdb", entry.map { .string($0.text) } ?? .null),
                ("signedPermutation", .bool(fit.isSignedPermutation)),
                (
                    "checks",
                    .array(
                        fit.checks.map {
                            .object([
                                ("pose", .string($0.pose.rawValue)),
                                ("error", .number(Self.round($0.error, places: 1))),
                            ])
                        })
                ),
                ("inUse", .string(sensor.mountMatrix.text)),
                ("alreadyRight", .bool(alreadyRight)),
            ]
            if let identityProblem { members.append(("hwdbProblem", .string(identityProblem))) }
            line(.object(members))
            return
        }
        say("\nMount matrix: \(fit.matrix.text)")
        if !fit.isSignedPermutation {
            say(
                """
                warning: the captures are not within \(Int(MountFit.permutationTolerance))° of an axis \
                permutation (worst \(PoseCapture.degrees(fit.worstError))): this is the best rotation; held at an \
                angle, or a sensor mounted askew?
                """
            )
        }
        for check in fit.checks {
            say(
                "  \(check.pose.rawValue): reads (\(Self.text(check.display))) with it, "
                    + "\(PoseCapture.degrees(check.error)) from the pose"
            )
        }
        if alreadyRight {
            say(
                """
                The matrix in use (\(sensor.mountMatrix.text), from \(sensor.mountMatrixOrigin.rawValue)) is \
                already right: nothing to change.
                """
            )
            return
        }
        say(
            """
            The matrix in use is \(sensor.mountMatrix.text) (from \(sensor.mountMatrixOrigin.rawValue)); this one \
            replaces it.
            """
        )
        if let entry {
            say("\nhwdb entry (systemd's 60-sensor.hwdb format):\n\n\(entry.text)")
        } else if let identityProblem {
            say(
                """
                \nNo hwdb entry: \(identityProblem). Give the matrix with --mount-matrix or [sensor] mount-matrix \
                instead.
                """
            )
        }
    }

    func written(_ path: String) {
        if json {
            line(.object([("written", .string(path))]))
        } else {
            say("Installed in \(path); systemd-hwdb update done.")
        }
    }

    /// What to do next: a paragraph of the text output; on standard error beside JSON.
    func advise(_ text: String) {
        if json { note(text) } else { say("\n" + text) }
    }

    /// A remark: on standard error, so JSON output stays one object per line.
    func note(_ text: String) {
        endBar()
        printError("orientd calibrate: \(text)")
    }

    func fail(_ message: String) {
        if json {
            line(.object([("error", .string(message))]))
        } else {
            endBar()
            printError("orientd calibrate: \(message)")
        }
    }

    static func prompt(_ pose: DeviceOrientation) -> String {
        switch pose {
        case .portrait: "Hold the device upright in portrait, top edge up, as you would read it. Keep it still."
        case .portraitUpsideDown: "Hold the device upside down, top edge down. Keep it still."
        case .landscapeLeft:
            "Turn it onto its side: landscape, left edge down (the top edge to the left). Keep it still."
        case .landscapeRight:
            "Turn it onto its side: landscape, right edge down (the top edge to the right). Keep it still."
        case .faceUp: "Lay it flat, screen up (on a table). Keep it still."
        case .faceDown: "Lay it flat, screen down. Keep it still."
        case .unknown: "Hold the device still."
        }
    }

    private static func round(_ value: Double, places: Double = 3) -> Double {
        let scale = places == 1 ? 10.0 : 1000.0
        return (value * scale).rounded() / scale + 0  // + 0 turns −0 into 0
    }

    private static func text(_ v: Vector3) -> String {
        [v.x, v.y, v.z].map { "\(round($0, places: 1))" }.joined(separator: ", ")
    }

    private func say(_ text: String) {
        endBar()
        emit(text + "\n")
    }

    private func line(_ value: JSONValue) {
        emit(value.serialized + "\n")
    }

    private func endBar() {
        guard barShown else { return }
        barShown = false
        lastBar = -2
        emit("\n")
    }

    private func emit(_ text: String) {
        text.utf8CString.withUnsafeBufferPointer { buffer in
            _ = Glibc.write(STDOUT_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }
}
