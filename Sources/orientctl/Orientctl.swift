import ArgumentParser
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import DesktopIntegration
import OrientationClient
import OrientationCore
import OrientationProtocol

@main
struct Orientctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orientctl",
        abstract: "Ask orientd how the device is held, watch it change, lock rotation, or act on every change.",
        discussion: """
            orientctl talks to orientd on its socket (--socket, else $ORIENTD_SOCKET, else \
            /run/orientd/orientd.sock).

            Exit status: 0 success, 1 `wait` timed out, 64 bad options, 69 orientd is not reachable, \
            77 permission denied, 76 the daemon refused the request.
            """,
        version: orientdPackageVersion,
        subcommands: [Get.self, Monitor.self, Motion.self, Wait.self, Lock.self, Follow.self]
    )

    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

struct ConnectionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "orientd's socket (default $ORIENTD_SOCKET or /run/orientd/orientd.sock).", valueName: "path"))
    var socket: String?

    var path: String { socket ?? OrientationClient.defaultSocketPath(environment: ProcessInfo.processInfo.environment) }

    /// Connects, or exits 69 with a message a person can act on.
    func connect() async throws -> OrientationClient {
        do {
            return try await OrientationClient.connect(path: path)
        } catch {
            complain("\(error) — is orientd running? (systemctl status orientd)")
            throw ExitCode(69)
        }
    }
}

func complain(_ message: String) {
    let line = Array("orientctl: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Turns a daemon rejection into the right exit status.
func rejection(_ error: any Error) -> ExitCode {
    if case OrientationClientError.rejected(let protocolError) = error {
        complain(
            protocolError.message.isEmpty
                ? protocolError.code.rawValue : "\(protocolError.code): \(protocolError.message)")
        return ExitCode(protocolError.code == .permissionDenied ? 77 : 76)
    }
    complain("\(error)")
    return ExitCode(69)
}

func describe(_ state: DaemonState) -> String {
    var lines = [
        "device: \(state.device)", "interface: \(state.interface)",
        "sensor: \(state.sensor.rawValue)\(state.sensorName.map { " (\($0))" } ?? "")"
            + (state.rate.map { ", read at \(($0 * 10).rounded() / 10) Hz" } ?? ""),
        "locked: \(state.locked ? "yes" : "no")",
    ]
    // A convertible's fields only where there is a convertible's value.
    // Each fault that holds, since when and why (the sensor is `failed` while any does).
    for fault in state.faults {
        lines.append("fault: \(fault.kind) since \(fault.since) (\(fault.device)): \(fault.detail)")
    }
    if let gyroscope = state.gyroscope {
        lines.append("gyroscope: \(gyroscope.status.rawValue)" + (gyroscope.detail.map { " (\($0))" } ?? ""))
    }
    if let hinge = state.hinge { lines.append("hinge: \((hinge * 10).rounded() / 10)°") }
    if let mode = state.mode { lines.append("mode: \(mode.rawValue)") }
    // The other kinds only where the device has them: the last level read while claimed.
    for kind in SensorKind.allCases {
        guard let sensor = state.kinds[kind] else { continue }
        let value = sensor.reading?.displayText ?? "not read yet (read while claimed)"
        lines.append("\(kind.stateKey): \(value) (\(sensor.sensor))")
    }
    if let dbus = state.dbus { lines.append("dbus: \(dbus)") }
    return lines.joined(separator: "\n")
}

/// What `monitor` follows without --topics: every topic anyone may subscribe to (the heading is
/// root's and the control group's, so it is followed only when asked for).
let monitorDefaultTopics = Topic.subscribable.filter { !$0.isPrivileged && $0 != .motion }.map(\.rawValue)
    .joined(separator: ",")

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            """
            Print the current state (device and interface orientation, sensor, lock; light, proximity and heading \
            where the device has them).
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the state as one JSON object.") var json = false

    func run() async throws {
        let client = try await connection.connect()
        do {
            let state = try await client.state()
            print(json ? state.json.serialized : describe(state))
        } catch {
            throw rejection(error)
        }
        await client.close()
    }
}

struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one line per change until interrupted.",
        discussion: """
            Subscribing keeps the sensors of the topics sampling (the accelerometer, ambient light, proximity). \
            Lines: `SEQ TOPIC FROM -> TO`; with --json the daemon's event objects. The compass's `heading` \
            is followed only when --topics names it, and needs root or the control group.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the daemon's events as JSON lines.") var json = false
    @Option(
        help: ArgumentHelp(
            "Topics to follow, comma-separated (default \(monitorDefaultTopics); also heading).", valueName: "topics"))
    var topics = monitorDefaultTopics

    func validate() throws {
        for name in topics.split(separator: ",")
        where Topic(rawValue: String(name)).map(Topic.subscribable.contains) != true {
            throw ValidationError(
                "--topics: \"\(name)\" is not a topic (\(Topic.subscribable.map(\.rawValue).joined(separator: ", ")))")
        }
        if topics.split(separator: ",").contains(Substring(Topic.motion.rawValue)) {
            throw ValidationError("--topics: motion is a stream, not a change: use `orientctl motion`")
        }
    }

    func run() async throws {
        let client = try await connection.connect()
        let state: DaemonState
        do {
            state = try await client.subscribe(topics.split(separator: ",").compactMap { Topic(rawValue: String($0)) })
        } catch {
            throw rejection(error)
        }
        if !json { print(describe(state).replacing("\n", with: ", ")) }
        fflush(nil)
        for await event in client.events {
            if event.isGoodbye {
                switch event.message["reason"] {
                case .string(let reason)?: complain("orientd said goodbye: \(reason)")
                case let reason?: complain("orientd said goodbye: \(reason.serialized)")
                case nil: complain("orientd said goodbye")
                }
                throw ExitCode(69)
            }
            if json {
                print(event.message.serialized)
            } else {
                guard let topic = event.topic else { continue }
                let change =
                    topic == .lock
                    ? "locked=\(event.message["locked"] == .bool(true))" : "\(event.from ?? "?") -> \(event.to ?? "?")"
                print("\(event.seq) \(topic.rawValue) \(change)")
            }
            fflush(nil)
        }
        complain("orientd closed the connection")
        throw ExitCode(69)
    }
}

struct Motion: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the device's motion (gravity, user acceleration, rotation rate, attitude) until interrupted.",
        discussion: """
            Subscribes to the `motion` topic, which keeps the accelerometer (and the gyroscope, where there is one) \
            reading at its sampling rate. One line per sample: TIME, then `g` gravity and `a` user acceleration \
            (m/s², the device's axes: x right, y up, z out of the screen; gravity + user acceleration is what the \
            accelerometer reads), `w` the rotation rate (rad/s, counter-clockwise positive) and `q` the attitude \
            (a unit quaternion w x y z relative to the first one printed); `w` and `q` read `-` without a gyroscope. \
            With --json the daemon's event objects. Rates above 60 Hz need root or the control group; the daemon \
            never exceeds the sensor's rate.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the daemon's events as JSON lines.") var json = false
    @Option(help: ArgumentHelp("Samples per second, 1 to 100 (default 20).", valueName: "hertz")) var rate: Double?

    func validate() throws {
        if let rate, !(rate >= MotionRate.minimum && rate <= MotionRate.maximum) {
            throw ValidationError("--rate must be from 1 to 100 Hz, got \(rate)")
        }
    }

    func run() async throws {
        let client = try await connection.connect()
        let granted: Double?
        do {
            granted = try await client.subscribeMotion(rate: rate)
        } catch {
            throw rejection(error)
        }
        if let granted, let rate, granted < rate {
            complain("orientd streams motion at \(Self.fixed(granted, 1)) Hz, not \(Self.fixed(rate, 1))")
        }
        for await event in client.events {
            if event.isGoodbye {
                complain("orientd said goodbye")
                throw ExitCode(69)
            }
            guard event.topic == .motion else { continue }
            if json {
                print(event.message.serialized)
            } else if let sample = event.motion {
                print(Self.line(sample))
            }
            fflush(nil)
        }
        complain("orientd closed the connection")
        throw ExitCode(69)
    }

    static func line(_ sample: MotionSample) -> String {
        func vector(_ v: Vector3, _ places: Int) -> String {
            [v.x, v.y, v.z].map { fixed($0, places) }.joined(separator: " ")
        }
        let rate = sample.rotationRate.map { vector($0, 3) } ?? "-"
        let attitude = sample.attitude.map { q in [q.w, q.x, q.y, q.z].map { fixed($0, 4) }.joined(separator: " ") }
        return
            """
            \(fixed(sample.time, 3)) g \(vector(sample.gravity, 2)) a \(vector(sample.userAcceleration, 2)) \
            w \(rate) q \(attitude ?? "-")
            """
    }

    /// `value` with exactly `places` decimals (FoundationEssentials has no String(format:)).
    static func fixed(_ value: Double, _ places: Int) -> String {
        var scale = 1
        for _ in 0..<places { scale *= 10 }
        // Beyond an integer's exact range (or not finite) as Swift writes it: no sensor reads that,
        // but a line from any daemon must not stop the printing.
        guard value.isFinite, abs(value) * Double(scale) < 9e15 else { return "\(value)" }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        let decimals = places > 0 ? "." + String(repeating: "0", count: places - fraction.count) + fraction : ""
        return "\(sign)\(scaled / scale)\(decimals)"
    }
}

struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            """
            Wait until the device (or, with --interface, the interface) is in ORIENTATION, or a convertible in \
            --mode.
            """,
        discussion:
            """
            Exits 0 as soon as it is (at once if it already is), 1 after --timeout seconds. `orientctl wait \
            --mode tablet` waits for a convertible folded into a tablet.
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help:
            """
            portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, faceDown or unknown (not with \
            --mode).
            """,
        completion: .list(DeviceOrientation.allCases.map(\.rawValue)))
    var orientation: String?
    @Flag(help: "Wait for the interface orientation instead of the device orientation.") var interface = false
    @Option(help: ArgumentHelp("Wait for a convertible's mode instead: laptop or tablet.", valueName: "mode")) var mode:
        DeviceMode?
    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds")) var timeout: Double?

    func validate() throws {
        if mode != nil {
            guard orientation == nil, !interface else {
                throw ValidationError("--mode waits for the mode alone: give no ORIENTATION and no --interface")
            }
            if let timeout, !(timeout >= 0) { throw ValidationError("--timeout must be ≥ 0") }
            return
        }
        guard let orientation else { throw ValidationError("give an ORIENTATION, or --mode laptop|tablet") }
        if interface {
            guard InterfaceOrientation(rawValue: orientation) != nil else {
                throw ValidationError("\"\(orientation)\" is not an interface orientation")
            }
        } else {
            guard DeviceOrientation(rawValue: orientation) != nil else {
                throw ValidationError("\"\(orientation)\" is not a device orientation")
            }
        }
        if let timeout, !(timeout >= 0) { throw ValidationError("--timeout must be ≥ 0") }
    }

    func run() async throws {
        let client = try await connection.connect()
        let topic: Topic = mode != nil ? .mode : interface ? .interface : .device
        let wanted = mode?.rawValue ?? orientation ?? ""
        func reached(_ state: DaemonState?) -> Bool {
            guard let state else { return false }
            switch topic {
            case .mode: return state.mode?.rawValue == wanted
            case .interface: return state.interface.rawValue == wanted
            default: return state.device.rawValue == wanted
            }
        }
        let state: DaemonState
        do {
            state = try await client.subscribe([topic])
        } catch {
            throw rejection(error)
        }
        if reached(state) { return }
        let timer = timeout.map { seconds in
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                await client.close()
            }
        }
        for await event in client.events where event.topic == topic && reached(event.state) {
            timer?.cancel()
            return
        }
        if timer != nil, !(timer!.isCancelled) {
            complain("timed out waiting for \(topic.rawValue) \(wanted)")
            throw ExitCode(1)
        }
        throw ExitCode(69)
    }
}

struct Lock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Engage or release the rotation lock (root or the control group); orientd keeps it across restarts.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "on or off.") var setting: LockSetting

    func run() async throws {
        let client = try await connection.connect()
        do {
            try await client.lock(setting == .on)
        } catch {
            throw rejection(error)
        }
        await client.close()
    }
}

struct Follow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Turn the screen and touch input with the interface (--rotate), or run a command on every change (--exec).",
        discussion: """
            --rotate BACKEND turns an output and maps touchscreens and pens onto it whenever the \
            interface orientation changes (so the rotation lock and the supported orientations apply): \
            sway (swaymsg: output NAME transform T, input DEVICE map_to_output NAME), hyprland (hyprctl \
            keyword monitor NAME,transform,N and the touchdevice and tablet transform), wlroots \
            (wlr-randr --output NAME --transform T, for labwc, wayfire, river and other compositors with \
            wlr-output-management), x11 (xrandr --output NAME --rotate R and xinput's Coordinate \
            Transformation Matrix for each touch device), or auto: sway, hyprland, wlroots or x11 from \
            SWAYSOCK, HYPRLAND_INSTANCE_SIGNATURE, WAYLAND_DISPLAY or DISPLAY, in that order. GNOME, KDE \
            and Phosh rotate by themselves through orientd's D-Bus interface and need none of this. The \
            output defaults to the built-in panel (eDP, DSI, LVDS) or the only output; touch devices to \
            the touchscreens and pens the compositor lists. The mapping is mutter's, KWin's and Phosh's \
            (docs/rotation.md): interface portrait → normal, landscapeLeft (the device's left edge up) \
            → 90, portraitUpsideDown → 180, landscapeRight → 270, counter-clockwise as wl_output counts. \
            A failing step is reported once (until it works again) and following goes on.

            --exec runs a command instead, or as well, split into words like a shell would (quotes \
            allowed) but never run by a shell: {transform} (normal, 90, 180, 270: what compositors \
            take), {xrandr} (normal, left, inverted, right), {interface}, {degrees} (UIKit's clockwise \
            rotation, -90…180: not a compositor value), {device}, {from} and {delta} are replaced inside \
            the words, so whatever the values are they stay single arguments. A failing command is \
            reported and following goes on.

            Both act once at start for the current orientation and after every change.

            Examples:
              orientctl follow --rotate auto
              orientctl follow --rotate sway --output DSI-1 --dry-run
              orientctl follow --exec 'wlr-randr --output DSI-1 --transform {transform}'
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(
        help: ArgumentHelp(
            "Turn the screen with this backend: auto, sway, hyprland, wlroots, x11.", valueName: "backend"))
    var rotate: BackendChoice?
    @Option(
        help: ArgumentHelp("The output to turn (default: the built-in panel, or the only output).", valueName: "name"))
    var output: String?
    @Option(
        help: ArgumentHelp(
            "A touchscreen or pen to map onto the output (repeatable; default: those the compositor lists).",
            valueName: "device"))
    var touch: [String] = []
    @Flag(help: "Print the commands --rotate would run instead of running them.")
    var dryRun = false
    @Option(help: ArgumentHelp("A command to run on every change.", valueName: "command"))
    var exec: String?

    func validate() throws {
        guard rotate != nil || exec != nil else {
            throw ValidationError("say what to do: --rotate BACKEND, --exec COMMAND, or both")
        }
        if let exec {
            guard let words = try? CommandTemplate(exec).words, !words.isEmpty else {
                throw ValidationError("--exec: the command is empty or has an unterminated quote")
            }
        }
        if rotate == nil, output != nil || !touch.isEmpty || dryRun {
            throw ValidationError("--output, --touch and --dry-run go with --rotate")
        }
    }

    func run() async throws {
        let template = try exec.map { try CommandTemplate($0) }
        var rotator = try rotate.map { try makeRotator($0) }
        let client = try await connection.connect()
        let state: DaemonState
        do {
            state = try await client.subscribe([.interface])
        } catch {
            throw rejection(error)
        }
        func act(_ interface: InterfaceOrientation, values: [String: String]) {
            if rotator != nil {
                let outcome = rotator!.apply(interface)
                for failure in outcome.reports { complain(failure) }
                if let turned = outcome.turned, let rotator {
                    say("\(interface.rawValue): \(rotator.output) \(turned.wayland)")
                }
            }
            var values = values
            let transform = OutputTransform(interface: interface)
            values["transform"] = transform?.wayland ?? ""
            values["xrandr"] = transform?.xrandr ?? ""
            template?.run(values: values)
        }
        if state.interface != .unknown {
            act(
                state.interface,
                values: [
                    "interface": state.interface.rawValue, "degrees": "\(state.interface.rotationDegrees ?? 0)",
                    "device": state.device.rawValue, "from": "", "delta": "0",
                ])
        }
        for await event in client.events {
            if event.isGoodbye { break }
            guard event.topic == .interface, let state = event.state else { continue }
            func number(_ key: String) -> String {
                if case .number(let n)? = event.message[key] { String(Int(n)) } else { "" }
            }
            // The rotation takes what it understands; --exec gets the server's text as it came.
            let interface = event.to.flatMap(InterfaceOrientation.init(rawValue:)) ?? state.interface
            act(
                interface,
                values: [
                    "interface": event.to ?? state.interface.rawValue, "degrees": number("rotationDegrees"),
                    "device": state.device.rawValue, "from": event.from ?? "", "delta": number("deltaDegrees"),
                ])
        }
        complain("orientd closed the connection")
        throw ExitCode(69)
    }

    /// The backend (auto: from the session, said once), its output and touch devices.
    private func makeRotator(_ choice: BackendChoice) throws -> ScreenRotator {
        let backend: RotationBackend
        if case .backend(let chosen) = choice {
            backend = chosen
        } else {
            switch RotationBackend.detect(environment: ProcessInfo.processInfo.environment) {
            case .success(let (found, reason)):
                backend = found
                complain("--rotate auto: \(found.rawValue) (\(reason))")
            case .failure(let failure):
                complain("--rotate auto: \(failure)")
                // A desktop that rotates by itself is done, not failed (the user unit stays quiet).
                throw ExitCode(failure.nothingToDo ? 0 : 69)
            }
        }
        // --dry-run asks the compositor what there is, but prints what it would change.
        let discovery = [backend.outputsCommand] + (backend.inputsCommand.map { [$0] } ?? [])
        let printing: ScreenRotator.Runner = { arguments in
            if discovery.contains(arguments) { return ExternalCommand.run(arguments) }
            say(CommandTemplate.quoted(arguments))
            return ExternalCommand(status: 0, output: "", arguments: arguments)
        }
        let run: ScreenRotator.Runner = dryRun ? printing : { ExternalCommand.run($0) }
        do {
            return try ScreenRotator(
                backend: backend, output: output, touch: touch, run: run, note: { complain("\($0)") })
        } catch {
            complain("--rotate \(backend.rawValue): \(error)")
            throw ExitCode(69)
        }
    }
}

/// A line on standard output, at once (a pipe or a journal reads it live).
func say(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// A command line split into words once, with `{name}` placeholders filled per run. No shell is
/// involved, so a value can never become shell syntax or a second argument.
struct CommandTemplate {
    let words: [String]

    init(_ text: String) throws {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil, !escaped else { throw ValidationError("unterminated quote") }
        if inWord { words.append(current) }
        self.words = words
    }

    /// The arguments with every `{name}` replaced by its value, in one pass over each word: a value
    /// that itself contains `{degrees}` or the like stays as it is.
    func arguments(values: [String: String]) -> [String] {
        words.map { word in
            var result = ""
            var rest = word[...]
            while let open = rest.firstIndex(of: "{") {
                result += rest[..<open]
                if let close = rest[open...].firstIndex(of: "}"),
                    let value = values[String(rest[rest.index(after: open)..<close])]
                {
                    result += value
                    rest = rest[rest.index(after: close)...]
                } else {
                    result.append("{")
                    rest = rest[rest.index(after: open)...]
                }
            }
            return result + rest
        }
    }

    /// Arguments as a shell would need them quoted, for printing.
    static func quoted(_ arguments: [String]) -> String {
        arguments.map { argument in
            argument.isEmpty || argument.contains(where: { " \t'\"\\$`*?[]{}();&|<>#~".contains($0) })
                ? "'" + argument.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
                    + "'" : argument
        }.joined(separator: " ")
    }

    /// Runs the command and waits; a failure is reported, not fatal.
    func run(values: [String: String]) {
        let arguments = arguments(values: values)
        // An argument ends at a NUL byte: a value holding one could not be passed as it is.
        guard !arguments.contains(where: { $0.utf8.contains(0) }) else {
            complain("not running the command: a value from orientd contains a NUL byte")
            return
        }
        guard let command = arguments.first else { return }
        // posix_spawnp, not Foundation's Process: Process would link Foundation's whole
        // internationalization layer (ICU's data, about 40 MB) into the self-contained orientctl.
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, command, nil, nil, argv, environ)
        guard spawned == 0 else {
            complain("cannot run \(command): \(String(cString: strerror(spawned)))")
            return
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7f, exitStatus = (status >> 8) & 0xff
        if signal != 0 {
            complain("\(arguments.joined(separator: " ")) was killed by signal \(signal)")
        } else if exitStatus != 0 {
            complain("\(arguments.joined(separator: " ")) exited with status \(exitStatus)")
        }
    }
}

// Arguments with a fixed set of values are typed: the parser refuses a wrong one with the list,
// `--help` shows them and shell completion offers them.

/// `orientctl lock on|off`.
enum LockSetting: String, CaseIterable, ExpressibleByArgument {
    case on, off
}

extension DeviceMode: ExpressibleByArgument {}

/// `--rotate auto` (the backend the session names) or a backend by name.
enum BackendChoice: ExpressibleByArgument, Equatable {
    case auto
    case backend(RotationBackend)

    init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let backend = RotationBackend(rawValue: argument) {
            self = .backend(backend)
        } else {
            return nil
        }
    }

    static var allValueStrings: [String] { ["auto"] + RotationBackend.allCases.map(\.rawValue) }
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
