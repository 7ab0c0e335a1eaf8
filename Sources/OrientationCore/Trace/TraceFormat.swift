/// The trace format of the corpus, `orientd replay` and the `stdin` sensor: CSV lines `t,x,y,z`
/// (seconds, then m/s² in the gravity-pointing frame of detection.md §1), with an optional header
/// line `t,x,y,z`.
public enum TraceFormat {
    /// The header line, as the corpus writes it.
    public static let header = "t,x,y,z"

    /// Parses one line. Returns nil for the header, blank lines and `#` comments.
    ///
    /// - Parameter lineNumber: 1-based, only used in the error.
    public static func parse<Line: StringProtocol>(
        line: Line, lineNumber: Int
    ) throws(TraceFormatError) -> (time: Double, reading: Vector3)? {
        let trimmed = Substring(line).trimmingWhitespace()
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        if trimmed.filter({ !$0.isWhitespace }) == header { return nil }
        let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 4 else {
            throw TraceFormatError(
                line: lineNumber, text: String(trimmed), problem: "expected 4 fields t,x,y,z, found \(fields.count)")
        }
        var values: [Double] = []
        values.reserveCapacity(4)
        for (index, field) in fields.enumerated() {
            let text = field.trimmingWhitespace()
            guard let value = Double(text), value.isFinite else {
                let name = ["t", "x", "y", "z"][index]
                throw TraceFormatError(
                    line: lineNumber, text: String(trimmed), problem: "field \(name) \"\(text)\" is not a finite number"
                )
            }
            values.append(value)
        }
        return (values[0], Vector3(values[1], values[2], values[3]))
    }
}

extension TraceFormat {
    /// The header of a convertible's two-sensor traces: `t,location,x,y,z`, `location` being
    /// `display` or `base` (docs/convertibles.md).
    public static let locatedHeader = "t,location,x,y,z"

    /// Parses a line of either format: `t,x,y,z` (a display reading) or `t,location,x,y,z`. Returns
    /// nil for headers, blank lines and `#` comments.
    public static func parseLocated<Line: StringProtocol>(
        line: Line, lineNumber: Int
    ) throws(TraceFormatError)
        -> (time: Double, location: SensorLocation, reading: Vector3)?
    {
        let trimmed = Substring(line).trimmingWhitespace()
        if trimmed.filter({ !$0.isWhitespace }) == locatedHeader { return nil }
        let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 5 else {
            return try parse(line: line, lineNumber: lineNumber).map { ($0.time, .display, $0.reading) }
        }
        let name = fields[1].trimmingWhitespace()
        guard let location = SensorLocation(rawValue: String(name)), location == .display || location == .base else {
            throw TraceFormatError(
                line: lineNumber, text: String(trimmed), problem: "location \"\(name)\" is neither display nor base")
        }
        let rest = ([fields[0]] + fields[2...]).joined(separator: ",")
        guard let (time, reading) = try parse(line: rest, lineNumber: lineNumber) else {
            throw TraceFormatError(line: lineNumber, text: String(trimmed), problem: "expected t,location,x,y,z")
        }
        return (time, location, reading)
    }
}

/// A trace line that could not be read; the caller adds the file name.
public struct TraceFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let text: String
    public let problem: String

    public var description: String { "line \(line): \(problem): \"\(text.prefix(120))\"" }
}
