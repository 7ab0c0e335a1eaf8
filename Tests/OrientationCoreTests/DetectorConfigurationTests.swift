import Testing
@testable import OrientationCore

@Suite("Detector configuration")
struct DetectorConfigurationTests {
    @Test("defaults are valid and every parameter can be set by name")
    func setByName() throws {
        try DetectorConfiguration().validate()
        var configuration = DetectorConfiguration()
        for parameter in DetectorConfiguration.parameters {
            let value = parameter.value(in: configuration)
            let text = parameter.name == "rest-minimum-samples" ? "4" : "\(value * 1.01 + (value == 0 ? 0.01 : 0))"
            try configuration.set(parameter.name, to: text)
            #expect(parameter.value(in: configuration) != value, "\(parameter.name) did not change")
        }
    }

    @Test("unknown names and bad values are refused with the name")
    func refused() {
        var configuration = DetectorConfiguration()
        #expect(throws: DetectorConfigurationError.unknownParameter("settle")) {
            try configuration.set("settle", to: "1")
        }
        #expect(throws: DetectorConfigurationError.notANumber(name: "settle-time", text: "soon")) {
            try configuration.set("settle-time", to: "soon")
        }
        #expect(throws: DetectorConfigurationError.notANumber(name: "settle-time", text: "nan")) {
            try configuration.set("settle-time", to: "nan")
        }
        #expect(throws: DetectorConfigurationError.notAnInteger(name: "rest-minimum-samples", text: "2.5")) {
            try configuration.set("rest-minimum-samples", to: "2.5")
        }
    }

    @Test("each parameter's range is in its row: the default lies in it, a value past a bound is refused naming it")
    func ranges() throws {
        for parameter in DetectorConfiguration.parameters {
            let range = parameter.range
            #expect(range.contains(parameter.value(in: DetectorConfiguration())), "\(parameter.name)'s default")
            var outside = [range.lowerIncluded ? range.lower - 1 : range.lower]
            if let upper = range.upper { outside.append(range.upperIncluded ? upper + 1 : upper) }
            for value in outside {
                var configuration = DetectorConfiguration()
                try configuration.set(
                    parameter.name, to: parameter.name == "rest-minimum-samples" ? String(Int(value)) : "\(value)")
                #expect(
                    throws: DetectorConfigurationError.outOfRange(name: parameter.name, expected: range.description)
                ) {
                    try configuration.validate()
                }
            }
        }
    }

    @Test(
        "inconsistent combinations are refused",
        arguments: [
            ("face-exit-tilt", "80", "face-exit-tilt"),
            ("filter-time-constant", "0", "filter-time-constant"),
            ("adjacent-hysteresis", "90", "adjacent-hysteresis"),
            ("overhead-exit-tilt", "-50", "overhead-enter-tilt"),
            ("rest-minimum-samples", "1", "rest-minimum-samples"),
            ("rest-minimum-samples", "1000", "rest-minimum-samples"),
        ])
    func validation(name: String, value: String, blamed: String) throws {
        var configuration = DetectorConfiguration()
        try configuration.set(name, to: value)
        do {
            try configuration.validate()
            Issue.record("\(name)=\(value) was accepted")
        } catch {
            guard case .outOfRange(let reported, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reported == blamed)
        }
    }
}
