/// One row of a trace: a reading of the accelerometer and, in the gyroscope form, of the gyroscope
/// at the same moment.
public struct TraceRow: Sendable, Hashable {
    /// Seconds; only differences matter.
    public var time: Double
    /// Which sensor of a convertible read it (`display` for every row of a one-sensor trace).
    public var location: SensorLocation
    /// m/s² in the gravity-pointing frame of detection.md §1 (the sensor's frame where a mount
    /// matrix is given).
    public var reading: Vector3
    /// rad/s about the same axes as `reading`, counter-clockwise positive seen from each axis's
    /// positive end (the right-hand rule, as Android and W3C); nil in the form without a gyroscope.
    public var rotationRate: Vector3?

    public init(time: Double, location: SensorLocation = .display, reading: Vector3, rotationRate: Vector3? = nil) {
        self.time = time
        self.location = location
        self.reading = reading
        self.rotationRate = rotationRate
    }
}

/// The trace format of the corpus, `orientd replay`, `orientd record` and the `stdin` sensor: CSV
/// lines `t,x,y,z` (seconds, then m/s² in the gravity-pointing frame of detection.md §1), or with a
/// gyroscope `t,x,y,z,gx,gy,gz` (rad/s about the same axes, right-hand rule), each with an optional
/// header line of its field names.
public enum TraceFormat {
    /// The header line of the form without a gyroscope, as the corpus writes it.
    public static let header = "t,x,y,z"
    /// The header line of the form with a gyroscope.
    public static let gyroscopeHeader = "t,x,y,z,gx,gy,gz"

    private static let fieldNames = ["t", "x", "y", "z", "gx", "gy", "gz"]

    /// Parses one line of either form (a file may mix them: a row without the gyroscope's fields has
    /// no rotation rate). Returns nil for a header, blank lines and `#` comments.
    ///
    /// - Parameter lineNumber: 1-based, only used in the error.
    public static func parse<Line: StringProtocol>(
        line: Line, lineNumber: Int
    ) throws(TraceFormatError) -> TraceRow? {
        let trimmed = Substring(line).trimmingWhitespace()
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        let compact = trimmed.filter { !$0.isWhitespace }
        if compact == header || compact == gyroscopeHeader { return nil }
        let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 4 || fields.count == 7 else {
            throw TraceFormatError(
                line: lineNumber, text: String(trimmed),
                problem: "expected 4 fields t,x,y,z or 7 fields t,x,y,z,gx,gy,gz, found \(fields.count)")
        }
        var values: [Double] = []
        values.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            let text = field.trimmingWhitespace()
            guard let value = Double(text), value.isFinite else {
                throw TraceFormatError(
                    line: lineNumber, text: String(trimmed),
                    problem: "field \(fieldNames[index]) \"\(text)\" is not a finite number")
            }
            values.append(value)
        }
        return TraceRow(
            time: values[0], reading: Vector3(values[1], values[2], values[3]),
            rotationRate: values.count == 7 ? Vector3(values[4], values[5], values[6]) : nil)
    }
}

extension TraceFormat {
    /// The header of a convertible's two-sensor traces: `t,location,x,y,z`, `location` being
    /// `display` or `base` (docs/convertibles.md).
    public static let locatedHeader = "t,location,x,y,z"

    /// Parses a line of any form: `t,x,y,z` or `t,x,y,z,gx,gy,gz` (the display's readings) or
    /// `t,location,x,y,z`. Returns nil for headers, blank lines and `#` comments.
    public static func parseLocated<Line: StringProtocol>(
        line: Line, lineNumber: Int
    ) throws(TraceFormatError) -> TraceRow? {
        let trimmed = Substring(line).trimmingWhitespace()
        if trimmed.filter({ !$0.isWhitespace }) == locatedHeader { return nil }
        let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 5 else { return try parse(line: line, lineNumber: lineNumber) }
        let name = fields[1].trimmingWhitespace()
        guard let location = SensorLocation(rawValue: String(name)), location == .display || location == .base else {
            throw TraceFormatError(
                line: lineNumber, text: String(trimmed), problem: "location \"\(name)\" is neither display nor base")
        }
        let rest = ([fields[0]] + fields[2...]).joined(separator: ",")
        guard var row = try parse(line: rest, lineNumber: lineNumber) else {
            throw TraceFormatError(line: lineNumber, text: String(trimmed), problem: "expected t,location,x,y,z")
        }
        row.location = location
        return row
    }
}

/// A trace line that could not be read; the caller adds the file name.
public struct TraceFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let text: String
    public let problem: String

    public var description: String { "line \(line): \(problem): \"\(text.prefix(120))\"" }
}
