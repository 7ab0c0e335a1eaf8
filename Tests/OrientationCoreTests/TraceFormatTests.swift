import Testing
@testable import OrientationCore

@Suite("Trace format")
struct TraceFormatTests {
    @Test("header, blank lines and comments are skipped")
    func skipped() throws {
        #expect(try TraceFormat.parse(line: "t,x,y,z", lineNumber: 1) == nil)
        #expect(try TraceFormat.parse(line: " t, x, y, z \r", lineNumber: 1) == nil)
        #expect(try TraceFormat.parse(line: "", lineNumber: 2) == nil)
        #expect(try TraceFormat.parse(line: "# recorded on a PineTab", lineNumber: 3) == nil)
        #expect(try TraceFormat.parse(line: "t,x,y,z,gx,gy,gz", lineNumber: 1) == nil)
        #expect(try TraceFormat.parse(line: "t, x, y, z, gx, gy, gz", lineNumber: 1) == nil)
    }

    @Test("a sample line")
    func sample() throws {
        let parsed = try #require(try TraceFormat.parse(line: "0.01033,-0.2299,-8.9286,-3.9374", lineNumber: 2))
        #expect(parsed.time == 0.01033)
        #expect(parsed.reading == Vector3(-0.2299, -8.9286, -3.9374))
        #expect(parsed.rotationRate == nil)
        #expect(parsed.location == .display)
    }

    @Test("a sample line with the gyroscope's rate")
    func gyroscopeSample() throws {
        let parsed = try #require(
            try TraceFormat.parse(line: "0.02,-0.2299,-8.9286,-3.9374,0.0123,-1.5,0", lineNumber: 3))
        #expect(parsed.time == 0.02)
        #expect(parsed.reading == Vector3(-0.2299, -8.9286, -3.9374))
        #expect(parsed.rotationRate == Vector3(0.0123, -1.5, 0))
    }

    @Test("a convertible's line names its sensor; the gyroscope form is the display's")
    func located() throws {
        let base = try #require(try TraceFormat.parseLocated(line: "1.5,base,0,0,-9.81", lineNumber: 2))
        #expect(base == TraceRow(time: 1.5, location: .base, reading: Vector3(0, 0, -9.81)))
        let gyro = try #require(try TraceFormat.parseLocated(line: "1.5,0,-9.81,0,0.1,0.2,0.3", lineNumber: 3))
        #expect(gyro == TraceRow(time: 1.5, reading: Vector3(0, -9.81, 0), rotationRate: Vector3(0.1, 0.2, 0.3)))
    }

    @Test(
        "errors name the line and the field",
        arguments: [
            ("1,2,3", "expected 4 fields t,x,y,z or 7 fields t,x,y,z,gx,gy,gz, found 3"),
            ("1,2,3,4,5,6", "expected 4 fields t,x,y,z or 7 fields t,x,y,z,gx,gy,gz, found 6"),
            ("1,2,3,4,5,6,7,8", "expected 4 fields t,x,y,z or 7 fields t,x,y,z,gx,gy,gz, found 8"),
            ("1,2,3,4,5,x,7", "field gy \"x\" is not a finite number"),
            ("1,2,abc,4", "field y \"abc\" is not a finite number"),
            ("nan,2,3,4", "field t \"nan\" is not a finite number"),
            ("1,2,3,inf", "field z \"inf\" is not a finite number"),
        ])
    func errors(line: String, problem: String) {
        #expect(throws: TraceFormatError(line: 7, text: line, problem: problem)) {
            try TraceFormat.parse(line: line, lineNumber: 7)
        }
    }
}
