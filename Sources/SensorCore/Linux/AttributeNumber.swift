extension StringProtocol {
    func trimmingWhitespaceCharacters() -> String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}

/// Reading numbers from sysfs attribute text (`-1000\n`, with libiio's trailing NUL; only the first
/// line counts), straight from the bytes: the per-sample path builds no strings. Integers, which
/// every driver's `raw` is, are parsed here; anything else goes through `Double(String)` exactly as
/// the rest of orientd reads attributes, so the accepted forms are the same either way.
public enum AttributeNumber {
    /// The finite value the text holds; nil for text that is not a number, NaN or infinite.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Double? {
        var start = bytes.startIndex
        // One value per attribute: only the first line counts.
        var end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        while start < end, isSpaceOrNUL(bytes[start]) { start += 1 }
        while end > start, isSpaceOrNUL(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        var index = start
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative || bytes[index] == UInt8(ascii: "+") { index += 1 }
        var magnitude: Int64 = 0
        var digits = 0
        while index < end, digits < 18, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
            magnitude = magnitude * 10 + Int64(digit)
            digits += 1
            index += 1
        }
        if index == end, digits > 0 { return Double(negative ? -magnitude : magnitude) }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// A `scale` attribute's value: a finite number above zero, or nil (the fault `bad-scale`).
    public static func positiveScale<Text: StringProtocol>(_ text: Text) -> Double? {
        guard let value = Double(text.trimmingWhitespaceCharacters()), value.isFinite, value > 0 else { return nil }
        return value
    }

    private static func isSpaceOrNUL(_ byte: UInt8) -> Bool {
        byte == 0 || byte == UInt8(ascii: " ") || (byte >= 9 && byte <= 13)
    }
}
