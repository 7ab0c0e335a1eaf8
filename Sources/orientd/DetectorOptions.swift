import ArgumentParser
import OrientationCore

/// `--detector NAME=VALUE` overrides, shared by every command that runs the pipeline.
struct DetectorOptions: ParsableArguments {
    @Option(
        name: .customLong("detector"),
        help: ArgumentHelp(
            "Set a detector parameter (repeatable), e.g. --detector settle-time=0.1.",
            valueName: "name=value"
        )
    )
    var overrides: [String] = []

    /// `base` (the defaults, or the configuration file's values) with every override applied, validated.
    func configuration(
        base: DetectorConfiguration = DetectorConfiguration()
    ) throws(ValidationError) -> DetectorConfiguration {
        var configuration = base
        for override in overrides {
            guard let equals = override.firstIndex(of: "=") else {
                throw ValidationError("--detector \"\(override)\": expected name=value")
            }
            do {
                try configuration.set(
                    String(override[..<equals]), to: String(override[override.index(after: equals)...]))
            } catch {
                throw ValidationError(error.description)
            }
        }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
        return configuration
    }

    /// The parameter table for `--help`: name, default, unit, range and meaning.
    /// Every parameter with its default, unit and range, under the rule that reads it (a heading per
    /// rule, as detection.md's rule index groups them).
    static var parameterHelp: String {
        let defaults = DetectorConfiguration()
        var lines: [String] = []
        var rule: String?
        for parameter in DetectorConfiguration.parameters {
            if parameter.rule != rule {
                rule = parameter.rule
                lines.append("  \(parameter.rule):")
            }
            let value = parameter.value(in: defaults)
            let shown = value == value.rounded() && abs(value) < 1e6 ? String(Int(value)) : "\(value)"
            lines.append("    \(parameter.name)=\(shown) (\(parameter.unit), \(parameter.range))")
            lines.append("        \(parameter.summary)")
        }
        return lines.joined(separator: "\n")
    }
}
