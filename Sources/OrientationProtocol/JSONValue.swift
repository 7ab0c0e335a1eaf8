#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON document as a value: parsed with Foundation's decoder, written with the keys in the order
/// they were given, so output lines read the same every time.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Keys in order; duplicates are not produced by the parser.
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)):
            // Objects compare as maps: key order is presentation only.
            x.count == y.count
                && Dictionary(uniqueKeysWithValues: x.map { ($0.key, $0.value) })
                    == Dictionary(uniqueKeysWithValues: y.map { ($0.key, $0.value) })
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let values): hasher.combine(values)
        case .object(let members): hasher.combine(Set(members.map(\.key)))
        }
    }

    /// Parses a complete JSON text.
    public static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw JSONSyntaxError(error)
        }
    }

    /// Parses a complete JSON text given as bytes.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try parse(Data(bytes))
    }

    /// The value of `key` in an object; nil when absent or not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Compact JSON text, one line.
    public var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 9.0e15 {
                output += String(Int64(value))
            } else if value.isFinite {
                output += "\(value)"
            } else {
                output += "null"  // JSON has no NaN or infinity
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(member.key, to: &output)
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            self = .object(
                try object.allKeys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) }.sorted {
                    $0.0 < $1.0
                })
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        let intValue: Int? = nil
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(nilLiteral: ()) { self = .null }
}

/// A position in a JSON document, for error messages: `vectors[3] (id "X").steps[1].action.type`.
/// Text that is not JSON, in the decoder's words (where it stopped and why), never a printout of
/// its error value: how Swift prints `DecodingError` differs between toolchains (6.2 dumps it).
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ error: any Error) {
        guard let error = error as? DecodingError else {
            description = (error as? CustomStringConvertible)?.description ?? "not valid JSON"
            return
        }
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let found), .typeMismatch(_, let found), .valueNotFound(_, let found),
            .keyNotFound(_, let found):
            context = found
        @unknown default:
            description = "not valid JSON"
            return
        }
        // The position is in the underlying error's text ("… around line 1, column 5").
        let reason = (context.underlyingError as? CustomStringConvertible)?.description ?? context.debugDescription
        let path = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        description = path.isEmpty ? reason : "\(reason) (at \(path.hasPrefix(".") ? String(path.dropFirst()) : path))"
    }
}

public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public private(set) var components: [String] = []

    public init() {}

    public func appending(_ key: String) -> JSONPath {
        var copy = self
        copy.components.append(components.isEmpty ? key : ".\(key)")
        return copy
    }

    public func appending(index: Int, label: String? = nil) -> JSONPath {
        var copy = self
        copy.components.append("[\(index)]" + (label.map { " (\($0))" } ?? ""))
        return copy
    }

    public var description: String { components.isEmpty ? "the document" : components.joined() }
}

/// A field of a JSON document that is missing or has the wrong type or value.
public struct JSONFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    public let path: JSONPath
    public let problem: String

    public init(path: JSONPath, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}

/// Typed, path-aware reading of a ``JSONValue``: every failure names the field.
public struct JSONReader: Sendable {
    public let value: JSONValue
    public let path: JSONPath

    public init(_ value: JSONValue, path: JSONPath = JSONPath()) {
        self.value = value
        self.path = path
    }

    public func fail(_ problem: String) -> JSONFieldError { JSONFieldError(path: path, problem: problem) }

    var typeName: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The member `key`; absent and null are both nil.
    public func optional(_ key: String) throws(JSONFieldError) -> JSONReader? {
        guard case .object(let members) = value else { throw fail("expected an object, found \(typeName)") }
        guard let member = members.first(where: { $0.key == key }), member.value != .null else { return nil }
        return JSONReader(member.value, path: path.appending(key))
    }

    /// True when `key` is present (even as null).
    public func has(_ key: String) -> Bool {
        guard case .object(let members) = value else { return false }
        return members.contains { $0.key == key }
    }

    public func required(_ key: String) throws(JSONFieldError) -> JSONReader {
        guard let member = try optional(key) else {
            throw JSONFieldError(path: path.appending(key), problem: "missing")
        }
        return member
    }

    public func string() throws(JSONFieldError) -> String {
        guard case .string(let text) = value else { throw fail("expected a string, found \(typeName)") }
        return text
    }

    public func bool() throws(JSONFieldError) -> Bool {
        guard case .bool(let flag) = value else { throw fail("expected true or false, found \(typeName)") }
        return flag
    }

    public func int() throws(JSONFieldError) -> Int {
        guard case .number(let number) = value, number == number.rounded(), abs(number) < 1e15 else {
            throw fail("expected an integer, found \(typeName == "a number" ? "\(value.serialized)" : typeName)")
        }
        return Int(number)
    }

    public func number() throws(JSONFieldError) -> Double {
        guard case .number(let number) = value else { throw fail("expected a number, found \(typeName)") }
        return number
    }

    public func array() throws(JSONFieldError) -> [JSONReader] {
        guard case .array(let values) = value else { throw fail("expected an array, found \(typeName)") }
        return values.enumerated().map { JSONReader($0.element, path: path.appending(index: $0.offset)) }
    }

    /// A string that must be one of `Value`'s raw values.
    public func enumeration<Value: RawRepresentable & CaseIterable>(_ type: Value.Type) throws(JSONFieldError) -> Value
    where Value.RawValue == String {
        let text = try string()
        guard let value = Value(rawValue: text) else {
            throw fail("\"\(text)\" is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}
