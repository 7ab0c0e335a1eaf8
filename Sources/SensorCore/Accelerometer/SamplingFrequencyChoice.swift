/// The sampling rate to ask a device for.
public enum SamplingFrequencyChoice {
    /// The rate nearest `target` that `available` offers. `available` is the text of
    /// `sampling_frequency_available`: a list ("12.5 25 50 100") or a range ("[min step max]");
    /// 0 (off) is never chosen. nil when the text offers nothing usable.
    public static func nearest(to target: Double, available: String) -> Double? {
        let trimmed = available.trimmingWhitespaceCharacters()
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
            let numbers = trimmed.dropFirst().dropLast().split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            guard numbers.count == 3 else { return nil }
            let (minimum, step, maximum) = (numbers[0], numbers[1], numbers[2])
            guard minimum.isFinite, step.isFinite, maximum.isFinite, step > 0, maximum >= minimum else { return nil }
            let steps = ((min(max(target, minimum), maximum) - minimum) / step).rounded()
            let value = minimum + steps * step
            if value > 0 { return min(value, maximum) }
            return minimum + step <= maximum ? minimum + step : nil
        }
        let values = trimmed.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }.filter {
            $0.isFinite && $0 > 0
        }
        return values.min { abs($0 - target) < abs($1 - target) }
    }

    /// The shortest decimal text for a rate: "25", "12.5" (some drivers take integers only).
    public static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
    }
}
