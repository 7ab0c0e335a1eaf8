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
    static var parameterHelp: String {
        let defaults = DetectorConfiguration()
        return DetectorConfiguration.parameters.map { parameter in
            let value = parameter.value(in: defaults)
            let shown = value == value.rounded() && abs(value) < 1e6 ? String(Int(value)) : "\(value)"
            return "  \(parameter.name)=\(shown) (\(parameter.unit), \(parameter.range))\n      \(parameter.summary)"
        }.joined(separator: "\n")
    }
}
