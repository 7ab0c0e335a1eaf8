import OrientationCore
import SensorCore

/// What a configuration file sets; every field nil means "not in the file".
public struct ConfigurationValues: Sendable {
    public var sensor: SensorSpecification?
    public var mountMatrix: MountMatrix?
    public var rate: Double?
    public var acquisition: AcquisitionMode?
    public var detector: [(name: String, value: String)] = []
    public var idiom: DeviceIdiom?
    public var supported: InterfaceOrientationMask?
    public var locked: Bool?
    public var socketPath: String?
    public var socketMode: UInt32?
    public var socketGroup: String?
    public var controlGroup: String?
    public var maximumClients: Int?
    public var stallTimeout: Double?
    public var claimLinger: Double?
    public var logLevel: String?

    public init() {}
}

/// An unusable configuration file: where, what, and the form expected.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let message: String

    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

/// The configuration file (`/etc/orientd/orientd.toml`): TOML with the tables and keys of
/// `systemd/orientd.toml`. Unknown tables and keys, wrong types and bad values are errors that name
/// the file, the line and the expected form.
public enum ConfigurationFile {
    public static let defaultPath = "/etc/orientd/orientd.toml"

    /// The tables, their keys and the form each expects (used for errors and documentation).
    public static let schema: [String: [String: String]] = [
        "sensor": ["sensor": "a string: auto, iio:NAME, iio:deviceN, ip:HOST, replay:FILE[?speed=N] or stdin",
                   "mount-matrix": "a string \"a, b, c; d, e, f; g, h, i\"", "rate": "a number of Hz > 0",
                   "acquisition": "a string: auto, poll or buffer"],
        "detector": Dictionary(uniqueKeysWithValues: DetectorConfiguration.parameters.map { ($0.name, "a number (\($0.unit)): \($0.summary)") }),
        "session": ["idiom": "a string: phone or pad", "supported": "an array of mask names, e.g. [\"portrait\", \"landscape\"]",
                    "locked": "true or false"],
        "socket": ["path": "a string: an absolute path", "mode": "a string with an octal mode, e.g. \"0660\"", "group": "a string: a group name"],
        "access": ["control-group": "a string: a group name"],
        "clients": ["max": "an integer > 0", "stall-timeout": "a number of seconds > 0", "claim-linger": "a number of seconds ≥ 0"],
        "log": ["level": "a string: trace, debug, info, notice, warning, error or critical"],
    ]

    public static func load(path: String) throws(ConfigurationError) -> ConfigurationValues {
        guard let file = fopen(path, "r") else {
            throw ConfigurationError(file: path, line: nil, message: "cannot read: \(String(cString: strerror(errno)))")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        fclose(file)
        return try parse(String(decoding: bytes, as: UTF8.self), file: path)
    }

    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> ConfigurationValues {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, message: "not valid TOML: \(error.message)")
        }
        var lines: [String: Int] = [:]  // "table" and "table.key" → line
        for table in document.tables {
            lines[table.name] = table.line
            for entry in table.entries { lines["\(table.name).\(entry.key)"] = entry.line }
        }
        func fail(_ table: String, _ key: String?, _ problem: String) -> ConfigurationError {
            let name = key.map { "[\(table)] \($0)" } ?? "[\(table)]"
            let expected = key.flatMap { schema[table]?[$0] }.map { " (expected \($0))" } ?? ""
            return ConfigurationError(file: file, line: key.flatMap { lines["\(table).\($0)"] } ?? lines[table], message: "\(name): \(problem)\(expected)")
        }
        var values = ConfigurationValues()
        for table in document.tables {
            let tableName = table.name
            guard !tableName.isEmpty else {
                throw ConfigurationError(file: file, line: table.entries.first?.line,
                                         message: "key \"\(table.entries[0].key)\" is outside a table (tables: \(schema.keys.sorted().joined(separator: ", ")))")
            }
            guard let keys = schema[tableName] else {
                throw ConfigurationError(file: file, line: table.line,
                                         message: "unknown table [\(tableName)] (tables: \(schema.keys.sorted().joined(separator: ", ")))")
            }
            for entry in table.entries {
                let (key, value) = (entry.key, entry.value)
                guard keys[key] != nil else {
                    throw ConfigurationError(file: file, line: entry.line,
                                             message: "[\(tableName)]: unknown key \"\(key)\" (keys: \(keys.keys.sorted().joined(separator: ", ")))")
                }
                func string() throws(ConfigurationError) -> String {
                    guard case .string(let text) = value else { throw fail(tableName, key, "wrong type \(value.typeName)") }
                    return text
                }
                func number() throws(ConfigurationError) -> Double {
                    if case .float(let double) = value, double.isFinite { return double }
                    if case .integer(let int) = value { return Double(int) }
                    throw fail(tableName, key, value.typeName == "float" ? "\(value) is not a finite number" : "wrong type \(value.typeName)")
                }
                switch (tableName, key) {
                case ("sensor", "sensor"):
                    do { values.sensor = try SensorSpecification(parsing: try string()) } catch let error as SensorSpecificationError {
                        throw fail(tableName, key, error.description)
                    } catch { throw error as! ConfigurationError }
                case ("sensor", "mount-matrix"):
                    do { values.mountMatrix = try MountMatrix(parsing: try string()) } catch let error as MountMatrixError {
                        throw fail(tableName, key, error.description)
                    } catch { throw error as! ConfigurationError }
                case ("sensor", "rate"):
                    let rate = try number()
                    guard rate > 0, rate <= 10_000 else { throw fail(tableName, key, "\(rate) is out of range") }
                    values.rate = rate
                case ("sensor", "acquisition"):
                    guard let mode = AcquisitionMode(rawValue: try string()) else { throw fail(tableName, key, "unknown mode") }
                    values.acquisition = mode
                case ("detector", _):
                    let value = try number()
                    values.detector.append((key, value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)))
                case ("session", "idiom"):
                    guard let idiom = DeviceIdiom(rawValue: try string()) else { throw fail(tableName, key, "unknown idiom") }
                    values.idiom = idiom
                case ("session", "supported"):
                    guard case .array(let array) = value else { throw fail(tableName, key, "wrong type \(value.typeName)") }
                    var mask: InterfaceOrientationMask = []
                    for element in array {
                        guard case .string(let name) = element, let named = InterfaceOrientationMask(name: name) else {
                            throw fail(tableName, key, "\(element) is not a mask name")
                        }
                        mask.formUnion(named)
                    }
                    guard !mask.isEmpty else { throw fail(tableName, key, "must name at least one orientation") }
                    values.supported = mask
                case ("session", "locked"):
                    guard case .boolean(let flag) = value else { throw fail(tableName, key, "wrong type \(value.typeName)") }
                    values.locked = flag
                case ("socket", "path"):
                    let path = try string()
                    guard path.hasPrefix("/") else { throw fail(tableName, key, "\"\(path)\" is not absolute") }
                    values.socketPath = path
                case ("socket", "mode"):
                    let text = try string()
                    guard let mode = UInt32(text, radix: 8), mode <= 0o777 else { throw fail(tableName, key, "\"\(text)\" is not an octal mode") }
                    values.socketMode = mode
                case ("socket", "group"):
                    values.socketGroup = try string()
                case ("access", "control-group"):
                    values.controlGroup = try string()
                case ("clients", "max"):
                    guard case .integer(let count) = value, count > 0 else { throw fail(tableName, key, "must be an integer > 0") }
                    values.maximumClients = count
                case ("clients", "stall-timeout"):
                    let seconds = try number()
                    guard seconds > 0 else { throw fail(tableName, key, "must be > 0") }
                    values.stallTimeout = seconds
                case ("clients", "claim-linger"):
                    let seconds = try number()
                    guard seconds >= 0 else { throw fail(tableName, key, "must be ≥ 0") }
                    values.claimLinger = seconds
                case ("log", "level"):
                    let level = try string()
                    guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(level) else {
                        throw fail(tableName, key, "unknown level \"\(level)\"")
                    }
                    values.logLevel = level
                default:
                    throw fail(tableName, key, "not handled")
                }
            }
        }
        // Detector values are checked together (some bound each other).
        var detector = DetectorConfiguration()
        for (name, value) in values.detector {
            do {
                try detector.set(name, to: value)
            } catch {
                throw fail("detector", name, error.description)
            }
        }
        do {
            try detector.validate()
        } catch {
            if case .outOfRange(let name, _) = error { throw fail("detector", name, error.description) }
            throw fail("detector", nil, error.description)
        }
        return values
    }
}

/// Renders an effective configuration as the file would write it (`orientd check-config`).
public enum ConfigurationRendering {
    public static func render(_ daemon: DaemonConfiguration, sensor: SensorConfiguration, logLevel: String) -> String {
        func masks(_ mask: InterfaceOrientationMask) -> String {
            if let named = InterfaceOrientationMask.namedMasks.first(where: { $0.mask == mask }) { return "[\"\(named.name)\"]" }
            return "[" + mask.orientations.map { "\"\($0.rawValue)\"" }.joined(separator: ", ") + "]"
        }
        func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e9 ? "\(Int(value))" : "\(value)" }
        var text = "[sensor]\nsensor = \"\(sensor.specification)\"\n"
        if let matrix = sensor.mountMatrix { text += "mount-matrix = \"\(matrix.text)\"\n" }
        text += "rate = \(number(sensor.rate))\nacquisition = \"\(sensor.acquisition.rawValue)\"\n\n[detector]\n"
        for parameter in DetectorConfiguration.parameters {
            text += "\(parameter.name) = \(number(parameter.value(in: daemon.detector)))\n"
        }
        text += "\n[session]\nidiom = \"\(daemon.idiom.rawValue)\"\nsupported = \(masks(daemon.supportedOrientations))\nlocked = \(daemon.lockedAtStart)\n"
        text += "\n[socket]\npath = \"\(daemon.socketPath)\"\nmode = \"0\(String(daemon.socketMode, radix: 8))\"\n"
        if let group = daemon.socketGroup { text += "group = \"\(group)\"\n" }
        if let group = daemon.controlGroup { text += "\n[access]\ncontrol-group = \"\(group)\"\n" }
        text += "\n[clients]\nmax = \(daemon.maximumClients)\nstall-timeout = \(number(daemon.stallTimeout))\nclaim-linger = \(number(daemon.claimLinger))\n"
        text += "\n[log]\nlevel = \"\(logLevel)\"\n"
        return text
    }
}

#if canImport(Glibc)
import Glibc
#endif
