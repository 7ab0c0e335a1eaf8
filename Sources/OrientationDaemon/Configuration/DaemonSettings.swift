import Logging
import OrientationCore
import OrientationProtocol
import SensorCore

/// Everything `orientd serve` runs with: the daemon's configuration, the sensor's, and the log level.
public struct ServeSettings: Sendable, Hashable {
    public var daemon = DaemonConfiguration()
    public var sensor = SensorConfiguration()
    /// A convertible's keyboard-base accelerometer (``BaseSensorChoice``) and its matrix override.
    public var baseSensor = BaseSensorChoice.auto
    public var baseMountMatrix: MountMatrix?
    public var logLevel = Logger.Level.info

    /// The base sensor's configuration, or nil when none is to be read.
    public var baseSensorConfiguration: SensorConfiguration? {
        baseSensor.configuration(besides: sensor, mountMatrix: baseMountMatrix)
    }

    public init() {}
}

/// Why a value cannot be used; the caller adds where it came from (file and line, or the option).
public struct SettingProblem: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// One setting of the daemon, described once: its table and key in the configuration file, its
/// command-line option, the form of its value (with bounds), its default and its help. The TOML
/// reader, the parsing and help of `serve`'s options, `check-config`'s output, orientd.toml(5) and
/// the commented example file all come from ``DaemonSetting/all``. argument-parser declares options
/// as properties, so `serve` also names each option once (a test holds the two together).
public struct DaemonSetting: Sendable {
    public let table: String
    public let key: String
    /// The long option (without dashes); nil when the setting is only in the file (the detector's
    /// parameters go through `--detector NAME=VALUE`).
    public let option: String?
    public let valueName: String
    /// What a value must look like, for errors and `--help`.
    public let expected: String
    /// What the setting does, for `--help` and the example file.
    public let help: String
    let readFile: @Sendable (TOMLDocument.Value, inout ServeSettings) throws(SettingProblem) -> Void
    let readText: @Sendable (String, inout ServeSettings) throws(SettingProblem) -> Void
    /// The current value as TOML; nil when unset (optional settings).
    let render: @Sendable (ServeSettings) -> String?

    /// `[table] key`, as errors name it.
    public var name: String { "[\(table)] \(key)" }

    /// Applies an option's value; the error names the option.
    public func apply(argument text: String, to settings: inout ServeSettings) throws(SettingProblem) {
        do {
            try readText(text, &settings)
        } catch {
            throw SettingProblem("--\(option ?? key): \(error.description) (expected \(expected))")
        }
    }

    /// The value in `settings` as the file writes it; nil when unset.
    public func value(in settings: ServeSettings) -> String? { render(settings) }

    /// `--help` text for the option: what it does and its default.
    public var optionHelp: String {
        let shown = render(ServeSettings()).map { " (default \($0.replacingQuotes))" } ?? ""
        return "\(help)\(shown)"
    }
}

extension String {
    /// A TOML value as the command line writes it: strings bare, arrays comma-separated.
    fileprivate var replacingQuotes: String {
        guard hasPrefix("\"") || hasPrefix("[") else { return self }
        return filter { $0 != "\"" && $0 != "[" && $0 != "]" && $0 != " " }
    }
}

/// How a value is read from the file and from the command line, checked, and written back.
struct ValueForm<Value: Sendable>: Sendable {
    var expected: String
    var fromFile: @Sendable (TOMLDocument.Value) throws(SettingProblem) -> Value
    var fromText: @Sendable (String) throws(SettingProblem) -> Value
    var show: @Sendable (Value) -> String?
}

extension ValueForm {
    /// A string in the file, the same text on the command line.
    static func text(
        _ expected: String, parse: @escaping @Sendable (String) throws(SettingProblem) -> Value,
        show: @escaping @Sendable (Value) -> String?
    ) -> ValueForm {
        ValueForm(
            expected: expected,
            fromFile: { value throws(SettingProblem) in
                guard case .string(let text) = value else { throw SettingProblem("wrong type \(value.typeName)") }
                return try parse(text)
            }, fromText: parse, show: { value in show(value).map(tomlString) })
    }

    /// One of an enumeration's raw values.
    static func choice(_ noun: String) -> ValueForm where Value: RawRepresentable<String> & CaseIterable {
        let names = Value.allCases.map(\.rawValue)
        return .text(
            "a string: \(names.joined(separator: ", "))",
            parse: { text throws(SettingProblem) in
                guard let value = Value(rawValue: text) else { throw SettingProblem("unknown \(noun) \"\(text)\"") }
                return value
            }, show: \.rawValue)
    }

    /// The same form, where a missing value means "not set" (nothing is written for it).
    func optional() -> ValueForm<Value?> {
        let form = self
        return ValueForm<Value?>(
            expected: expected, fromFile: { value throws(SettingProblem) in try form.fromFile(value) },
            fromText: { text throws(SettingProblem) in try form.fromText(text) },
            show: { value in value.flatMap(form.show) })
    }
}

extension ValueForm where Value == Double {
    /// A number (an integer or a float in the file); `check` names what is wrong with it.
    static func number(_ expected: String, check: @escaping @Sendable (Double) -> String?) -> ValueForm {
        ValueForm(
            expected: expected,
            fromFile: { value throws(SettingProblem) in
                let number: Double
                switch value {
                case .float(let double) where double.isFinite: number = double
                case .integer(let int): number = Double(int)
                case .float: throw SettingProblem("\(value) is not a finite number")
                default: throw SettingProblem("wrong type \(value.typeName)")
                }
                if let problem = check(number) { throw SettingProblem(problem) }
                return number
            },
            fromText: { text throws(SettingProblem) in
                guard let number = Double(text), number.isFinite else {
                    throw SettingProblem("\"\(text)\" is not a number")
                }
                if let problem = check(number) { throw SettingProblem(problem) }
                return number
            }, show: formatNumber)
    }
}

extension ValueForm where Value == Int {
    static func integer(above floor: Int) -> ValueForm {
        let problem = "must be an integer > \(floor)"
        return ValueForm(
            expected: "an integer > \(floor)",
            fromFile: { value throws(SettingProblem) in
                guard case .integer(let count) = value, count > floor else { throw SettingProblem(problem) }
                return count
            },
            fromText: { text throws(SettingProblem) in
                guard let count = Int(text), count > floor else { throw SettingProblem(problem) }
                return count
            }, show: { "\($0)" })
    }
}

extension ValueForm where Value == Bool {
    static let boolean = ValueForm(
        expected: "true or false",
        fromFile: { value throws(SettingProblem) in
            guard case .boolean(let flag) = value else { throw SettingProblem("wrong type \(value.typeName)") }
            return flag
        },
        fromText: { text throws(SettingProblem) in
            guard let flag = Bool(text) else { throw SettingProblem("\"\(text)\" is not true or false") }
            return flag
        }, show: { "\($0)" })
}

extension ValueForm where Value == UInt32 {
    /// A file mode in octal, as a string ("0660"): TOML's integers would read 0660 as decimal.
    static let octalMode = ValueForm.text(
        "a string with an octal mode, e.g. \"0660\"",
        parse: { text throws(SettingProblem) in
            guard let mode = UInt32(text, radix: 8), mode <= 0o777 else {
                throw SettingProblem("\"\(text)\" is not an octal mode")
            }
            return mode
        }, show: { "0" + String($0, radix: 8) })
}

extension ValueForm where Value == InterfaceOrientationMask {
    /// Mask names: an array in the file, comma-separated on the command line; never empty.
    static let mask: ValueForm = {
        let names = InterfaceOrientationMask.namedMasks.map(\.name)
        @Sendable func union(_ given: [String]) throws(SettingProblem) -> InterfaceOrientationMask {
            var mask: InterfaceOrientationMask = []
            for name in given {
                guard let named = InterfaceOrientationMask(name: name) else {
                    throw SettingProblem("\"\(name)\" is not a mask name")
                }
                mask.formUnion(named)
            }
            guard !mask.isEmpty else { throw SettingProblem("must name at least one orientation") }
            return mask
        }
        return ValueForm(
            expected: "mask names (\(names.joined(separator: ", ")))",
            fromFile: { value throws(SettingProblem) in
                guard case .array(let elements) = value else { throw SettingProblem("wrong type \(value.typeName)") }
                var given: [String] = []
                for element in elements {
                    guard case .string(let name) = element else {
                        throw SettingProblem("\(element) is not a mask name")
                    }
                    given.append(name)
                }
                return try union(given)
            },
            fromText: { text throws(SettingProblem) in
                try union(text.split(separator: ",").map { String($0) })
            },
            show: { mask in
                if let named = InterfaceOrientationMask.namedMasks.first(where: { $0.mask == mask }) {
                    return "[\(tomlString(named.name))]"
                }
                return "[" + mask.orientations.map { tomlString($0.rawValue) }.joined(separator: ", ") + "]"
            })
    }()
}

/// A TOML basic string: JSON's escapes (`\"`, `\\`, `\n`, `\r`, `\t`, `\uXXXX`) are TOML's too.
private func tomlString(_ text: String) -> String {
    JSONValue.string(text).serialized
}

/// Integers without a decimal point, other numbers as Swift writes them (both valid TOML).
private func formatNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}

extension DaemonSetting {
    init<Value>(
        _ table: String, _ key: String, option: String?, valueName: String, _ form: ValueForm<Value>,
        at keyPath: WritableKeyPath<ServeSettings, Value> & Sendable, help: String
    ) {
        self.table = table
        self.key = key
        self.option = option
        self.valueName = valueName
        expected = form.expected
        self.help = help
        readFile = { value, settings throws(SettingProblem) in settings[keyPath: keyPath] = try form.fromFile(value) }
        readText = { text, settings throws(SettingProblem) in settings[keyPath: keyPath] = try form.fromText(text) }
        render = { settings in form.show(settings[keyPath: keyPath]) }
    }

    /// A detector parameter (``DetectorConfiguration/parameters``): `[detector] NAME`, set on the
    /// command line with `--detector NAME=VALUE`. Bounds between parameters are checked together
    /// once all are read.
    init(detector parameter: DetectorConfiguration.Parameter) {
        table = "detector"
        key = parameter.name
        option = nil
        valueName = parameter.unit
        expected = "a number (\(parameter.unit)): \(parameter.summary)"
        help = "\(parameter.summary) (\(parameter.unit))"
        let form = ValueForm<Double>.number(expected) { _ in nil }
        readFile = { value, settings throws(SettingProblem) in
            let number = try form.fromFile(value)
            do throws(DetectorConfigurationError) {
                try settings.daemon.detector.set(parameter.name, to: formatNumber(number))
            } catch {
                throw SettingProblem(error.description)
            }
        }
        readText = { text, settings throws(SettingProblem) in
            do throws(DetectorConfigurationError) { try settings.daemon.detector.set(parameter.name, to: text) } catch {
                throw SettingProblem(error.description)
            }
        }
        render = { settings in formatNumber(parameter.value(in: settings.daemon.detector)) }
    }

    /// Every setting, in the order of the file.
    public static let all: [DaemonSetting] =
        [
            DaemonSetting(
                "sensor", "sensor", option: "sensor", valueName: "spec",
                .text(
                    "a string: \(SensorSpecification.grammar)",
                    parse: { text throws(SettingProblem) in
                        do throws(SensorSpecificationError) { return try SensorSpecification(parsing: text) } catch {
                            throw SettingProblem(error.description)
                        }
                    }, show: \.description), at: \.sensor.specification,
                help:
                    """
                    Which accelerometer: auto (the best local one: display before lid, never the keyboard base), \
                    iio:NAME (driver name or label), iio:deviceN, ip:HOST (served by iiod), \
                    replay:FILE[?speed=N], stdin.
                    """
            ),
            DaemonSetting(
                "sensor", "mount-matrix", option: "mount-matrix", valueName: "a, b, c; d, e, f; g, h, i",
                ValueForm<MountMatrix>.text(
                    "a string \"a, b, c; d, e, f; g, h, i\"",
                    parse: { text throws(SettingProblem) in
                        do throws(MountMatrixError) { return try MountMatrix(parsing: text) } catch {
                            throw SettingProblem(error.description)
                        }
                    }, show: \.text
                ).optional(), at: \.sensor.mountMatrix,
                help:
                    """
                    Sensor-to-display matrix, rows separated by ';' (device = M · raw); overrides udev's \
                    ACCEL_MOUNT_MATRIX and the sysfs mount_matrix attributes.
                    """
            ),
            DaemonSetting(
                "sensor", "rate", option: "rate", valueName: "hz",
                .number("a number of Hz in (0, 10000]") { rate in
                    rate > 0 && rate <= 10_000 ? nil : "\(rate) is out of range"
                }, at: \.sensor.rate,
                help: "Sampling rate to ask the device for, in Hz; the nearest rate it offers is used."),
            DaemonSetting(
                "sensor", "acquisition", option: "acquisition", valueName: "mode", .choice("mode"),
                at: \.sensor.acquisition,
                help:
                    """
                    How to read an IIO device: auto (buffered capture when it has a trigger, else polling), poll, \
                    buffer.
                    """
            ),
            DaemonSetting(
                "sensor", "rest-rate", option: "rest-rate", valueName: "hz",
                .number("a number of Hz ≥ 0 (0: always the rate)") { rate in
                    rate >= 0 && rate <= 10_000 ? nil : "\(rate) is out of range"
                }, at: \.daemon.restRate,
                help:
                    """
                    While the device rests lying still (held in a hand: held-rate), a polled sensor is read this \
                    often instead of at the rate (one with a motion interrupt sleeps on it instead; a buffered one \
                    hands over batches this long); the first reading that moves brings the rate back at once. 0 \
                    reads at the rate always.
                    """
            ),
            DaemonSetting(
                "sensor", "held-rate", option: "held-rate", valueName: "hz",
                .number("a number of Hz ≥ 0 (0: the rest rate)") { rate in
                    rate >= 0 && rate <= 10_000 ? nil : "\(rate) is out of range"
                }, at: \.daemon.heldRate,
                help:
                    """
                    The rest rate while the device is held: at rest but swaying by more than 0.006 g (a hand, a \
                    lap), where a flick can come at any moment. After 2 s without sway the device lies still and \
                    is read at rest-rate. 0 reads it at rest-rate too; a rate below rest-rate is rest-rate.
                    """
            ),
            DaemonSetting(
                "sensor", "gyroscope-rate", option: "gyroscope-rate", valueName: "hz",
                .number("a number of Hz ≥ 0 (0: the rate)") { rate in
                    rate >= 0 && rate <= 10_000 ? nil : "\(rate) is out of range"
                }, at: \.daemon.gyroscopeRate,
                help:
                    """
                    While the device moves and a working gyroscope runs with the accelerometer, both are read \
                    at least this often (the device is asked for the nearest rate it offers): the fusion \
                    integrates the rotation rate step by step, and a hand's quickest turn integrates only from \
                    about 50 Hz. At rest, without a gyroscope or with a failed one, the rate. 0: the rate always.
                    """
            ),
            DaemonSetting(
                "sensor", "motion-margin", option: "motion-margin", valueName: "g",
                .number("a number of g in (0, 1]") { margin in
                    margin > 0 && margin <= 1 ? nil : "\(margin) is out of range"
                }, at: \.daemon.motionMargin,
                help:
                    """
                    How far a reading may depart from the resting gravity, in g, and still be rest (0.1 g is \
                    about 6° of tilt).
                    """
            ),
        ] + DetectorConfiguration.parameters.map(DaemonSetting.init(detector:)) + [
            DaemonSetting(
                "session", "idiom", option: "idiom", valueName: "idiom", .choice("idiom"), at: \.daemon.idiom,
                help:
                    """
                    The system session's idiom: phone or pad (pads may show portraitUpsideDown; the lock keeps \
                    the current orientation).
                    """
            ),
            DaemonSetting(
                "session", "supported", option: "supported", valueName: "mask", .mask,
                at: \.daemon.supportedOrientations,
                help:
                    """
                    Interface orientations the system session supports: \
                    \(InterfaceOrientationMask.namedMasks.map(\.name).joined(separator: ", ")) (an array in the \
                    file, comma-separated on the command line).
                    """
            ),
            DaemonSetting(
                "session", "locked", option: "locked", valueName: "bool", .boolean, at: \.daemon.lockedAtStart,
                help: "Engage the rotation lock at start (a lock kept by persist-lock wins)."),
            DaemonSetting(
                "session", "persist-lock", option: "persist-lock", valueName: "bool", .boolean,
                at: \.daemon.persistLock,
                help:
                    """
                    Keep the rotation lock and what it pins across restarts and reboots, in the state \
                    directory ($STATE_DIRECTORY, else /var/lib/orientd).
                    """
            ),
            DaemonSetting(
                "socket", "path", option: "socket", valueName: "path",
                .text(
                    "a string: an absolute path",
                    parse: { path throws(SettingProblem) in
                        guard path.hasPrefix("/") else { throw SettingProblem("\"\(path)\" is not absolute") }
                        return path
                    }, show: { $0 }), at: \.daemon.socketPath,
                help: "The socket to listen on ($ORIENTD_SOCKET overrides the file)."),
            DaemonSetting(
                "socket", "mode", option: "socket-mode", valueName: "mode", .octalMode, at: \.daemon.socketMode,
                help: "Mode of the socket file; reading orientation is not a secret: restrict it with 0660 and a group."
            ),
            DaemonSetting(
                "socket", "group", option: "socket-group", valueName: "group",
                ValueForm<String>.text("a string: a group name", parse: { $0 }, show: { $0 }).optional(),
                at: \.daemon.socketGroup, help: "Group of the socket file (default: the daemon's own)."),
            DaemonSetting(
                "access", "control-group", option: "control-group", valueName: "group",
                ValueForm<String>.text("a string: a group name", parse: { $0 }, show: { $0 }).optional(),
                at: \.daemon.controlGroup,
                help: "Members of this group (besides root) may lock rotation and change the system session."),
            DaemonSetting(
                "clients", "max", option: "max-clients", valueName: "n", .integer(above: 0),
                at: \.daemon.maximumClients,
                help:
                    """
                    Further connections are refused with too-many-clients. Each client takes two file \
                    descriptors; the daemon raises its soft open-file limit to 2 x max + 64 (or warns when the \
                    hard limit is lower).
                    """
            ),
            DaemonSetting(
                "clients", "stall-timeout", option: "stall-timeout", valueName: "seconds",
                .number("a number of seconds > 0") { seconds in
                    seconds > 0 ? nil : "must be > 0"
                }, at: \.daemon.stallTimeout,
                help:
                    """
                    A client whose socket takes nothing for this long while something waits for it is \
                    disconnected (meanwhile it gets only the newest state); one that reads, however slowly, stays.
                    """
            ),
            DaemonSetting(
                "clients", "claim-linger", option: "claim-linger", valueName: "seconds",
                .number("a number of seconds ≥ 0") { seconds in
                    seconds >= 0 ? nil : "must be ≥ 0"
                }, at: \.daemon.claimLinger,
                help: "The sensor keeps sampling this long after the last client stops needing it."),
            DaemonSetting(
                "dbus", "mode", option: "dbus", valueName: "mode", .choice("mode"), at: \.daemon.dbusMode,
                help:
                    """
                    Serve net.hadess.SensorProxy (iio-sensor-proxy's interface) on the system bus: auto (when the \
                    bus is reachable at start), on (exit 69 when it is not), off.
                    """
            ),
            DaemonSetting(
                "dbus", "polkit", option: "dbus-polkit", valueName: "bool", .boolean, at: \.daemon.dbusPolkit,
                help:
                    """
                    Check every D-Bus claim with polkit (action net.hadess.SensorProxy.claim-sensor); without \
                    polkit on the bus, only root and the control group may claim.
                    """
            ),
            DaemonSetting(
                "dbus", "follows-lock", option: "dbus-follows-lock", valueName: "bool", .boolean,
                at: \.daemon.dbusFollowsLock,
                help:
                    """
                    While the rotation lock is engaged, AccelerometerOrientation says the orientation it pins, so \
                    a desktop or a greeter that knows nothing of orientd's lock stays put; off for a desktop \
                    that keeps a lock of its own.
                    """
            ),
            DaemonSetting(
                "hinge", "base-sensor", option: "base-sensor", valueName: "spec",
                .text(
                    "a string: auto, none, or \(SensorSpecification.grammar)",
                    parse: { text throws(SettingProblem) in
                        do throws(SensorSpecificationError) { return try BaseSensorChoice(parsing: text) } catch {
                            throw SettingProblem(error.description)
                        }
                    }, show: \.description), at: \.baseSensor,
                help:
                    """
                    A convertible's keyboard-base accelerometer, for the hinge angle and tablet mode: auto (the \
                    sensor udev, its label or its location names base, beside the display sensor; the base rows \
                    of a replayed two-sensor trace), none, or a sensor.
                    """
            ),
            DaemonSetting(
                "hinge", "base-mount-matrix", option: "base-mount-matrix", valueName: "a, b, c; d, e, f; g, h, i",
                ValueForm<MountMatrix>.text(
                    "a string \"a, b, c; d, e, f; g, h, i\"",
                    parse: { text throws(SettingProblem) in
                        do throws(MountMatrixError) { return try MountMatrix(parsing: text) } catch {
                            throw SettingProblem(error.description)
                        }
                    }, show: \.text
                ).optional(), at: \.baseMountMatrix,
                help:
                    """
                    The base sensor's matrix, overriding udev and sysfs; with the lid closed it must make the \
                    base read what the display reads.
                    """
            ),
            DaemonSetting(
                "hinge", "laptop-keeps-normal", option: "laptop-keeps-normal", valueName: "bool", .boolean,
                at: \.daemon.laptopKeepsNormal,
                help:
                    """
                    In laptop mode the interface keeps its natural orientation (the display sensor tilts with the \
                    lid); in tablet mode it follows the display sensor.
                    """
            ),
            DaemonSetting(
                "hinge", "tablet-mode-switch", option: "tablet-mode-switch", valueName: "mode", .choice("mode"),
                at: \.daemon.tabletModeSwitch,
                help:
                    """
                    Report tablet mode to libinput and the desktop through a uinput SW_TABLET_MODE switch: auto \
                    (when /dev/uinput is writable and the kernel has no tablet-mode switch of its own), on, off.
                    """
            ),
            DaemonSetting(
                "hinge", "uinput", option: nil, valueName: "path",
                .text(
                    "a string: an absolute path",
                    parse: { path throws(SettingProblem) in
                        guard path.hasPrefix("/") else { throw SettingProblem("\"\(path)\" is not absolute") }
                        return path
                    }, show: { $0 }), at: \.daemon.uinputPath,
                help: "The uinput device the tablet-mode switch is created through."),
        ] + hingeParameters + [
            DaemonSetting(
                "log", "level", option: "log-level", valueName: "level", .choice("level"), at: \.logLevel,
                help: "trace, debug, info, notice, warning, error or critical.")
        ]

    /// The hinge detector's parameters (file only): `[hinge] tablet-above` and the rest.
    static let hingeParameters: [DaemonSetting] = {
        func parameter(
            _ key: String, _ path: WritableKeyPath<ServeSettings, Double> & Sendable, _ unit: String,
            _ range: ClosedRange<Double>, _ help: String
        ) -> DaemonSetting {
            let expected =
                "a number of \(unit) in [\(formatNumber(range.lowerBound)), \(formatNumber(range.upperBound))]"
            return DaemonSetting(
                "hinge", key, option: nil, valueName: unit,
                .number(expected) { value in
                    range.contains(value) ? nil : "\(formatNumber(value)) is out of range"
                }, at: path, help: help)
        }
        return [
            parameter(
                "tablet-above", \.daemon.hinge.tabletAbove, "degrees", 180...350,
                "Tablet mode beyond this hinge angle (ChromeOS: 200)."),
            parameter(
                "laptop-below", \.daemon.hinge.laptopBelow, "degrees", 10...180,
                "Laptop mode again below this angle (ChromeOS: 160)."),
            parameter(
                "confirmation", \.daemon.hinge.confirmation, "seconds", 0...5,
                "A mode changes after every steady reading for this long was past its threshold."),
            parameter(
                "smoothing", \.daemon.hinge.smoothing, "seconds", 0.01...2,
                "Time constant of each sensor's low-pass filter."),
            parameter(
                "hinge-vertical-limit", \.daemon.hinge.hingeVerticalLimit, "m/s²", 5...9.5,
                "Beyond this hinge-axis component on either sensor the hinge is too near vertical to measure."),
            parameter(
                "magnitude-tolerance", \.daemon.hinge.magnitudeTolerance, "m/s²", 0.2...5,
                "A reading further than this from g is a jolt: it moves neither angle nor mode."),
            parameter(
                "stale-after", \.daemon.hinge.staleAfter, "seconds", 0.1...10,
                "A sensor silent for this long makes the angle unknown; the mode holds."),
            parameter(
                "ambiguous-zone", \.daemon.hinge.ambiguousZone, "degrees", 0...60,
                "At start, within this many degrees of closed or folded back the mode waits for the hinge to move."),
            parameter(
                "deadband", \.daemon.hinge.deadband, "degrees", 0...10,
                "The published angle changes when the estimate moves this much."),
        ]
    }()

    /// The setting with this option.
    public static func option(_ name: String) -> DaemonSetting {
        guard let setting = all.first(where: { $0.option == name }) else {
            preconditionFailure("no setting has the option --\(name)")
        }
        return setting
    }

    /// The tables in file order, with what each is about (the example file's headings).
    static let tables: [(name: String, about: String)] = [
        ("sensor", ""),
        ("detector", "Angles in degrees, times in seconds, accelerations in m/s² (docs/detection.md §3)."),
        ("session", "The system resolver session, whose interface orientation every client sees as state.interface."),
        ("socket", ""),
        ("access", ""),
        ("clients", ""),
        (
            "dbus",
            """
            net.hadess.SensorProxy on the system bus, for desktops that speak iio-sensor-proxy's interface \
            (docs/dbus.md).
            """
        ),
        (
            "hinge",
            "Convertibles: the keyboard base's accelerometer, the hinge angle and tablet mode (docs/convertibles.md)."
        ),
        ("log", ""),
    ]
}
