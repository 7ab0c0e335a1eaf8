import OrientationCore
import Testing
@testable import SensorIO

/// What a polled attribute's text becomes by its driver's rule (``AttributeConversion``): every bad
/// value is refused with a reason that quotes it, so the log line names it.
@Suite("Light and proximity attribute text")
struct AttributeConversionTests {
    func convert(
        _ text: String, _ conversion: any AttributeConversion<SensorReading>
    ) -> Result<SensorReading, ValueProblem> {
        var conversion = conversion
        return conversion.reading(from: text)
    }

    func problem(_ text: String, _ conversion: any AttributeConversion<SensorReading>) -> String? {
        if case .failure(let problem) = convert(text, conversion) { return problem.description }
        return nil
    }

    @Test("IIO light: (raw + offset) × scale in lux, trailing newline and blanks dropped")
    func light() throws {
        #expect(
            try convert("10\n", IIOPollLightDriver.Conversion(scale: 2, offset: 5)).get()
                == .light(level: 30, unit: .lux))
        #expect(
            try convert(" 12.5 ", IIOPollLightDriver.Conversion(scale: 1, offset: 0)).get()
                == .light(level: 12.5, unit: .lux))
        #expect(
            try convert("0\n", IIOPollLightDriver.Conversion(scale: 0.25, offset: 0)).get()
                == .light(level: 0, unit: .lux))
    }

    @Test("IIO light: text, NaN, infinity and a negative level are refused, quoted")
    func badLight() {
        #expect(
            problem("garbage\n", IIOPollLightDriver.Conversion(scale: 1, offset: 0)) == "\"garbage\" is not a number")
        #expect(problem("nan", IIOPollLightDriver.Conversion(scale: 1, offset: 0)) == "\"nan\" is not a number")
        #expect(problem("inf", IIOPollLightDriver.Conversion(scale: 1, offset: 0)) == "\"inf\" is not a number")
        #expect(problem("", IIOPollLightDriver.Conversion(scale: 1, offset: 0)) == "\"\" is not a number")
        #expect(
            problem("-4", IIOPollLightDriver.Conversion(scale: 1, offset: 0))
                == "\"-4\" gives -4.0 lux: a light level is never negative")
        #expect(
            problem("3", IIOPollLightDriver.Conversion(scale: 1, offset: -10))
                == "\"3\" gives -7.0 lux: a light level is never negative")
    }

    @Test("applesmc light \"(left,right)\": the brighter side in % of 255, vendor units; anything else refused")
    func applesmc() throws {
        #expect(try convert("(10,255)\n", HwmonLightDriver.Conversion()).get() == .light(level: 100, unit: .vendor))
        #expect(try convert("(51, 0)", HwmonLightDriver.Conversion()).get() == .light(level: 20, unit: .vendor))
        for bad in ["10,255", "(10)", "(a,b)", "(-1,3)", "(1,2,3)", ""] {
            #expect(problem(bad, HwmonLightDriver.Conversion()) == "\"\(bad)\" is not \"(left,right)\"", "\(bad)")
        }
    }

    @Test("proximity: near above the level, far only below it by the margin; text refused")
    func proximity() {
        var conversion = IIOPollProximityDriver.Conversion(nearLevel: 100)
        func read(_ text: String) -> SensorReading? { try? conversion.reading(from: text).get() }
        #expect(read("10") == .proximity(near: false))
        #expect(read("101") == .proximity(near: true))
        #expect(read("95") == .proximity(near: true), "within the margin below the level: still near")
        #expect(read("80") == .proximity(near: false))
        #expect(problem("near", IIOPollProximityDriver.Conversion(nearLevel: 100)) == "\"near\" is not a number")
    }
}
