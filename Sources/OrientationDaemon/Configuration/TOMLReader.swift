/// The part of TOML 1.0 that orientd's configuration file uses, read with the line of every table and
/// key: comments, `[table]` headers, `key = value` with bare or quoted keys, basic and literal
/// strings, integers (decimal, `0x`, `0o`, `0b`, with `_`), floats (`inf`, `nan`), booleans and
/// (multi-line) arrays of them. The rest of TOML (multi-line strings, dates, inline tables, arrays
/// of tables, dotted keys) is valid TOML that no key of orientd takes: it is rejected by name.
///
/// Why not a TOML library: the only one available links Foundation (and ICU) into the daemon, which
/// then costs several MiB of resident memory for the sake of reading a dozen keys once.
struct TOMLDocument {
    enum Value: Equatable, CustomStringConvertible {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case array([Value])

        /// The TOML type name, for "wrong type" errors.
        var typeName: String {
            switch self {
            case .string: "string"
            case .integer: "integer"
            case .float: "float"
            case .boolean: "boolean"
            case .array: "array"
            }
        }

        /// The value as TOML text (strings quoted).
        var description: String {
            switch self {
            case .string(let text): "\"\(text)\""
            case .integer(let value): "\(value)"
            case .float(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
            }
        }
    }

    struct Entry {
        var key: String
        var value: Value
        var line: Int
    }

    struct Table {
        var name: String
        var line: Int
        var entries: [Entry]
    }

    struct SyntaxError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { message }
    }

    /// The tables in file order; keys before the first header belong to a table named "".
    private(set) var tables: [Table] = []

    init(parsing text: String) throws(SyntaxError) {
        var reader = Reader(Array(text.utf8))
        tables = [Table(name: "", line: 1, entries: [])]
        var seenTables: Set<String> = [""]
        while true {
            reader.skipBlankAndComments()
            guard let byte = reader.peek() else { break }
            if byte == UInt8(ascii: "[") {
                let line = reader.line
                reader.advance()
                if reader.peek() == UInt8(ascii: "[") {
                    throw reader.error("arrays of tables ([[…]]) are not used in orientd's configuration")
                }
                reader.skipSpaces()
                let name = try reader.key()
                reader.skipSpaces()
                guard reader.peek() == UInt8(ascii: "]") else { throw reader.error("expected ] after the table name") }
                reader.advance()
                try reader.endOfLine()
                guard seenTables.insert(name).inserted else {
                    throw SyntaxError(line: line, message: "table [\(name)] defined twice")
                }
                tables.append(Table(name: name, line: line, entries: []))
            } else {
                let line = reader.line
                let key = try reader.key()
                reader.skipSpaces()
                guard reader.peek() == UInt8(ascii: "=") else {
                    throw reader.error("expected = after the key \"\(key)\"")
                }
                reader.advance()
                reader.skipSpaces()
                let value = try reader.value()
                try reader.endOfLine()
                if tables[tables.count - 1].entries.contains(where: { $0.key == key }) {
                    throw SyntaxError(line: line, message: "key \"\(key)\" defined twice")
                }
                tables[tables.count - 1].entries.append(Entry(key: key, value: value, line: line))
            }
        }
        if tables[0].entries.isEmpty { tables.removeFirst() }
    }

    /// A cursor over the UTF-8 bytes with the current line number.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func peek(_ offset: Int = 0) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

        mutating func advance() {
            if bytes[index] == UInt8(ascii: "\n") { line += 1 }
            index += 1
        }

        func error(_ message: String) -> SyntaxError { SyntaxError(line: line, message: message) }

        mutating func skipSpaces() {
            while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { advance() }
        }

        mutating func skipComment() {
            guard peek() == UInt8(ascii: "#") else { return }
            while let byte = peek(), byte != UInt8(ascii: "\n") { advance() }
        }

        /// Spaces, newlines and comments between statements (and between array elements).
        mutating func skipBlankAndComments() {
            while true {
                skipSpaces()
                skipComment()
                guard let byte = peek(), byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") else { return }
                advance()
            }
        }

        /// After a statement: only spaces and a comment before the end of the line.
        mutating func endOfLine() throws(SyntaxError) {
            skipSpaces()
            skipComment()
            if peek() == UInt8(ascii: "\r") { advance() }
            guard let byte = peek() else { return }
            guard byte == UInt8(ascii: "\n") else {
                throw error("unexpected \(Self.show(byte)) after the value (one key or table per line)")
            }
            advance()
        }

        static func show(_ byte: UInt8) -> String {
            byte >= 0x21 && byte < 0x7F ? "\"\(Character(Unicode.Scalar(byte)))\"" : "byte 0x\(String(byte, radix: 16))"
        }

        static func isBare(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_")
        }

        /// A bare or quoted key (or table name).
        mutating func key() throws(SyntaxError) -> String {
            let key: String
            switch peek() {
            case UInt8(ascii: "\"")?: key = try basicString()
            case UInt8(ascii: "'")?: key = try literalString()
            case let byte? where Self.isBare(byte):
                let start = index
                while let byte = peek(), Self.isBare(byte) { advance() }
                key = String(decoding: bytes[start..<index], as: UTF8.self)
            case let byte?: throw error("expected a key, found \(Self.show(byte))")
            case nil: throw error("expected a key at the end of the file")
            }
            skipSpaces()
            if peek() == UInt8(ascii: ".") {
                throw error("dotted keys are not used in orientd's configuration (\"\(key).…\")")
            }
            return key
        }

        mutating func value() throws(SyntaxError) -> Value {
            guard let byte = peek() else { throw error("expected a value at the end of the file") }
            switch byte {
            case UInt8(ascii: "\""):
                if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                    throw error("multi-line strings are not used in orientd's configuration")
                }
                return .string(try basicString())
            case UInt8(ascii: "'"):
                if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
                    throw error("multi-line strings are not used in orientd's configuration")
                }
                return .string(try literalString())
            case UInt8(ascii: "["):
                return try array()
            case UInt8(ascii: "{"):
                throw error("inline tables are not used in orientd's configuration")
            default:
                return try scalar()
            }
        }

        mutating func array() throws(SyntaxError) -> Value {
            advance()  // [
            var values: [Value] = []
            while true {
                skipBlankAndComments()
                if peek() == UInt8(ascii: "]") {
                    advance()
                    return .array(values)
                }
                values.append(try value())
                skipBlankAndComments()
                switch peek() {
                case UInt8(ascii: ",")?: advance()
                case UInt8(ascii: "]")?: continue
                case let byte?: throw error("expected , or ] in the array, found \(Self.show(byte))")
                case nil: throw error("the array is not closed with ]")
                }
            }
        }

        /// `"…"` with TOML's escapes.
        mutating func basicString() throws(SyntaxError) -> String {
            advance()  // "
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard let byte = peek(), byte != UInt8(ascii: "\n") else {
                    throw error("the string is not closed with \" on its line")
                }
                advance()
                if byte == UInt8(ascii: "\"") { break }
                guard byte == UInt8(ascii: "\\") else {
                    raw.append(byte)
                    continue
                }
                guard let escape = peek() else { throw error("the string is not closed with \"") }
                advance()
                let simple: UInt8? =
                    switch escape {
                    case UInt8(ascii: "\""): UInt8(ascii: "\"")
                    case UInt8(ascii: "\\"): UInt8(ascii: "\\")
                    case UInt8(ascii: "n"): 0x0A
                    case UInt8(ascii: "t"): 0x09
                    case UInt8(ascii: "r"): 0x0D
                    case UInt8(ascii: "b"): 0x08
                    case UInt8(ascii: "f"): 0x0C
                    default: nil
                    }
                if let simple {
                    raw.append(simple)
                } else if escape == UInt8(ascii: "u") || escape == UInt8(ascii: "U") {
                    let count = escape == UInt8(ascii: "u") ? 4 : 8
                    guard index + count <= bytes.count,
                        let code = UInt32(String(decoding: bytes[index..<index + count], as: UTF8.self), radix: 16),
                        let scalar = Unicode.Scalar(code)
                    else { throw error("invalid \\\(Character(Unicode.Scalar(escape))) escape in the string") }
                    for _ in 0..<count { advance() }
                    flush()
                    scalars.append(scalar)
                } else {
                    throw error("invalid escape \\\(Self.show(escape)) in the string")
                }
            }
            flush()
            return String(scalars)
        }

        /// `'…'`, taken as it is.
        mutating func literalString() throws(SyntaxError) -> String {
            advance()  // '
            let start = index
            while true {
                guard let byte = peek(), byte != UInt8(ascii: "\n") else {
                    throw error("the string is not closed with ' on its line")
                }
                if byte == UInt8(ascii: "'") { break }
                advance()
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            advance()  // '
            return text
        }

        /// A boolean, integer or float: the bytes up to a delimiter.
        mutating func scalar() throws(SyntaxError) -> Value {
            let start = index
            while let byte = peek(),
                ![
                    UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"),
                    UInt8(ascii: ","), UInt8(ascii: "]"),
                ].contains(byte)
            { advance() }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if let value = Self.scalar(text) { return value }
            if text.contains(":") || (text.count >= 10 && text.dropFirst(4).first == "-") {
                throw error("dates and times are not used in orientd's configuration (\(text))")
            }
            throw error(text.isEmpty ? "expected a value" : "\"\(text)\" is not a TOML value (strings need quotes)")
        }

        static func scalar(_ text: String) -> Value? {
            switch text {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            case "inf", "+inf": return .float(.infinity)
            case "-inf": return .float(-.infinity)
            case "nan", "+nan", "-nan": return .float(.nan)
            default: break
            }
            // Underscores only between digits.
            let parts = text.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty }) else { return nil }
            if parts.count > 1,
                !parts.dropLast().allSatisfy({ $0.last!.isHexDigit })
                    || !parts.dropFirst().allSatisfy({ $0.first!.isHexDigit })
            {
                return nil
            }
            let plain = parts.joined()
            for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where plain.hasPrefix(prefix) {
                return Int(plain.dropFirst(2), radix: radix).map(Value.integer)
            }
            let digits = plain.first == "+" || plain.first == "-" ? plain.dropFirst() : Substring(plain)
            guard let first = digits.first, first.isASCII, first.isNumber else { return nil }
            // no leading zeros
            if digits.count > 1, first == "0", digits.dropFirst().first?.isNumber == true { return nil }
            if digits.allSatisfy({ $0.isASCII && $0.isNumber }) { return Int(plain).map(Value.integer) }
            // A float needs digits on both sides of the point.
            if let point = plain.firstIndex(of: ".") {
                let before = plain[..<point].last, after = plain[plain.index(after: point)...].first
                guard before?.isNumber == true, after?.isNumber == true else { return nil }
            }
            guard plain.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }), let value = Double(plain)
            else { return nil }
            return .float(value)
        }
    }
}
