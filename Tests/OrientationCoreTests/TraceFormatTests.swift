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
    }

    @Test("a sample line")
    func sample() throws {
        let parsed = try #require(try TraceFormat.parse(line: "0.01033,-0.2299,-8.9286,-3.9374", lineNumber: 2))
        #expect(parsed.time == 0.01033)
        #expect(parsed.reading == Vector3(-0.2299, -8.9286, -3.9374))
    }

    @Test(
        "errors name the line and the field",
        arguments: [
            ("1,2,3", "expected 4 fields t,x,y,z, found 3"),
            ("1,2,3,4,5", "expected 4 fields t,x,y,z, found 5"),
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
