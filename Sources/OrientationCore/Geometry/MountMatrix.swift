/// The 3×3 matrix that turns a sensor's axes into the display's axes: `device = M · raw`.
///
/// Row *i* gives output axis *i*, exactly as the kernel's `mount_matrix` attributes and systemd's hwdb
/// `ACCEL_MOUNT_MATRIX` write it: `"a, b, c; d, e, f; g, h, i"`.
public struct MountMatrix: Sendable, Hashable {
    /// The rows, each the weights of the raw x, y and z axes for one display axis.
    public let rows: [Vector3]

    public static let identity = MountMatrix(uncheckedRows: [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)])

    private init(uncheckedRows rows: [Vector3]) {
        self.rows = rows
    }

    /// A matrix from three rows; rejects non-finite entries and all-zero rows, which would erase an
    /// axis.
    public init(rows: [[Double]]) throws(MountMatrixError) {
        let text = rows.map { $0.map { "\($0)" }.joined(separator: ", ") }.joined(separator: "; ")
        guard rows.count == 3 else { throw MountMatrixError(text: text, reason: .rowCount(rows.count)) }
        var vectors: [Vector3] = []
        for (index, row) in rows.enumerated() {
            guard row.count == 3 else {
                throw MountMatrixError(text: text, reason: .columnCount(row: index + 1, found: row.count))
            }
            guard row.allSatisfy(\.isFinite) else {
                throw MountMatrixError(
                    text: text, reason: .notANumber(row: index + 1, entry: row.map { "\($0)" }.joined(separator: ", ")))
            }
            guard row.contains(where: { $0 != 0 }) else {
                throw MountMatrixError(text: text, reason: .zeroRow(row: index + 1))
            }
            vectors.append(Vector3(row[0], row[1], row[2]))
        }
        self.rows = vectors
    }

    /// Parses the kernel/udev text form `"a, b, c; d, e, f; g, h, i"`.
    ///
    /// Spaces are optional and surrounding whitespace (the newline at the end of a sysfs value) is
    /// ignored. Wrong counts, entries that are not finite decimal numbers and all-zero rows are
    /// rejected with an error that quotes the text.
    public init(parsing text: String) throws(MountMatrixError) {
        let rowTexts = text.split(separator: ";", omittingEmptySubsequences: false)
        guard rowTexts.count == 3 else { throw MountMatrixError(text: text, reason: .rowCount(rowTexts.count)) }
        var rows: [[Double]] = []
        for (index, rowText) in rowTexts.enumerated() {
            let entries = rowText.split(separator: ",", omittingEmptySubsequences: false)
            guard entries.count == 3 else {
                throw MountMatrixError(text: text, reason: .columnCount(row: index + 1, found: entries.count))
            }
            var row: [Double] = []
            for entry in entries {
                let trimmed = entry.trimmingWhitespace()
                guard let value = Double(trimmed), value.isFinite, trimmed.allSatisfy(\.isDecimalNumberCharacter) else {
                    throw MountMatrixError(text: text, reason: .notANumber(row: index + 1, entry: String(trimmed)))
                }
                row.append(value)
            }
            rows.append(row)
        }
        do {
            try self.init(rows: rows)
        } catch {
            // Re-quote the caller's text rather than the normalised rows.
            throw MountMatrixError(text: text, reason: error.reason)
        }
    }

    /// `M · v`: the raw sensor vector expressed in the display frame.
    @inlinable public func apply(_ v: Vector3) -> Vector3 {
        Vector3(rows[0].dot(v), rows[1].dot(v), rows[2].dot(v))
    }

    /// A rotation rate (an axial vector) in the display frame: `det(M) · M · ω`. A mirrored matrix
    /// (determinant −1) turns a right-handed frame into a left-handed one, in which a turn that was
    /// counter-clockwise about an axis reads clockwise; the sign keeps the right-hand rule.
    public func applyToRotation(_ rate: Vector3) -> Vector3 {
        let determinant = rows[0].dot(rows[1].cross(rows[2]))
        return (determinant < 0 ? -1 : 1) * apply(rate)
    }

    /// The 48 matrices that permute the axes and flip signs (determinant ±1): every way a sensor can
    /// sit square on a board, mirrored mountings included.
    public static let signedPermutations: [MountMatrix] = [
        [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0],
    ].flatMap { permutation in
        (0..<8).map { signs in
            MountMatrix(
                uncheckedRows: (0..<3).map { row in
                    let sign: Double = signs >> row & 1 == 1 ? -1 : 1
                    return Vector3(
                        permutation[row] == 0 ? sign : 0, permutation[row] == 1 ? sign : 0,
                        permutation[row] == 2 ? sign : 0)
                })
        }
    }

    /// The udev/sysfs text form, integers printed without a fraction.
    public var text: String {
        rows.map { row in [row.x, row.y, row.z].map(Self.text(of:)).joined(separator: ", ") }.joined(separator: "; ")
    }

    /// One element: an integer without a fraction, anything else as Swift prints a Double. (Written
    /// out with its types: as one closure it took the type checker about 5 s.)
    private static func text(of value: Double) -> String {
        let isInteger: Bool = value == value.rounded() && abs(value) < 1e15
        return isInteger ? String(Int(value)) : String(value)
    }
}

extension MountMatrix: CustomStringConvertible {
    public var description: String { text }
}

/// Why a mount matrix was rejected; the message quotes the offending text.
public struct MountMatrixError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case rowCount(Int)
        case columnCount(row: Int, found: Int)
        case notANumber(row: Int, entry: String)
        case zeroRow(row: Int)
    }

    /// The text as given.
    public let text: String
    public let reason: Reason

    public var description: String {
        let what =
            switch reason {
            case .rowCount(let count): "expected 3 rows separated by ';', found \(count)"
            case .columnCount(let row, let found): "row \(row) has \(found) entries, expected 3 separated by ','"
            case .notANumber(let row, let entry): "row \(row): \"\(entry)\" is not a finite number"
            case .zeroRow(let row): "row \(row) is all zeros, which would erase an axis"
            }
        return "invalid mount matrix \"\(text)\": \(what) (form: \"a, b, c; d, e, f; g, h, i\")"
    }
}

extension Character {
    /// Digits, sign, decimal point and exponent: what a decimal number in sysfs may contain. Keeps
    /// `Double`'s extra spellings ("nan", "inf", hexadecimal) out of mount matrices.
    fileprivate var isDecimalNumberCharacter: Bool {
        isASCII && (isNumber || self == "." || self == "-" || self == "+" || self == "e" || self == "E")
    }
}

extension Substring {
    /// The text without surrounding whitespace: sysfs values, udev properties and config values
    /// all arrive with a newline or padding that is not part of the value.
    public func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}

extension String {
    /// The text without surrounding whitespace (see `Substring.trimmingWhitespace()`).
    public func trimmingWhitespace() -> Substring { Substring(self).trimmingWhitespace() }
}
