import OrientationCore

/// Turns one output (and maps touch devices onto it) through a backend, on every interface
/// orientation it is given. The programs it runs go through `run` (a recording runner in tests,
/// `--dry-run`'s printer); a failing step is reported once per kind until that kind succeeds
/// again, and following goes on.
public struct ScreenRotator {
    public typealias Runner = (_ arguments: [String]) -> ExternalCommand

    public let backend: RotationBackend
    public let output: String
    public let touch: [String]
    /// The transform last applied; unknown and face-up interfaces keep it.
    public private(set) var current: OutputTransform?
    private var failing: Set<RotationBackend.Step> = []
    private let run: Runner

    /// Why no output can be turned.
    public struct SetupFailure: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// Finds the output (`output`, else the built-in panel) and the touch devices (`touch`, else
    /// the touchscreens and pens the compositor lists) by asking the compositor through `run`.
    /// `note` hears what was chosen and why.
    public init(
        backend: RotationBackend, output: String?, touch: [String], run: @escaping Runner,
        note: (String) -> Void
    ) throws(SetupFailure) {
        self.backend = backend
        self.run = run
        if let output {
            self.output = output
        } else {
            let listed = run(backend.outputsCommand)
            guard listed.status == 0 else {
                throw SetupFailure(description: "cannot list the outputs: \(listed.summary)")
            }
            switch RotationBackend.builtInOutput(backend.outputs(from: listed.output)) {
            case .success(let name):
                self.output = name
                note("output \(name) (the built-in panel or the only output; --output names another)")
            case .failure(let failure):
                throw SetupFailure(description: failure.description)
            }
        }
        if !touch.isEmpty {
            if !backend.mapsTouchDevices {
                note(
                    backend == .hyprland
                        ? """
                        --touch is not needed with Hyprland: its touchdevice and tablet settings turn every touch \
                        device
                        """
                        : """
                        the wlroots backend cannot map touch devices (wlr-output-management has none): map them \
                        in the compositor's configuration
                        """
                )
            }
            self.touch = backend.mapsTouchDevices ? touch : []
        } else if let command = backend.inputsCommand {
            let listed = run(command)
            self.touch = listed.status == 0 ? backend.touchDevices(from: listed.output) : []
            if listed.status != 0 { note("cannot list input devices (\(listed.summary)): no touch device is mapped") }
            note(
                self.touch.isEmpty
                    ? "no touchscreen or pen listed" : "touch devices: \(self.touch.joined(separator: ", "))")
        } else {
            self.touch = []
        }
    }

    /// What one rotation did.
    public struct Outcome: Sendable, Hashable {
        /// The transform the output was turned to; nil when the interface keeps the last one or
        /// turning the output failed.
        public var turned: OutputTransform?
        /// Failures to report: each kind once, until it works again.
        public var reports: [String]
    }

    /// Applies the transform for `interface` (nothing for unknown: the last one stays).
    public mutating func apply(_ interface: InterfaceOrientation) -> Outcome {
        guard let transform = OutputTransform(interface: interface) else { return Outcome(turned: nil, reports: []) }
        current = transform
        var reports: [String] = []
        var failed: Set<RotationBackend.Step> = []
        for (step, arguments) in backend.commands(transform: transform, output: output, touch: touch) {
            let result = run(arguments)
            guard result.status != 0 else { continue }
            if !failing.contains(step), !failed.contains(step) {
                reports.append(
                    "\(step == .output ? "turning the output" : "mapping touch input") failed: \(result.summary)")
            }
            failed.insert(step)
        }
        failing = failed
        return Outcome(turned: failed.contains(.output) ? nil : transform, reports: reports)
    }
}
