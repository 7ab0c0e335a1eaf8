import Testing
@testable import OrientationDaemon

@Suite("TOML reader (the configuration's subset)")
struct TOMLReaderTests {
    func values(_ text: String) throws -> [String: TOMLDocument.Value] {
        var out: [String: TOMLDocument.Value] = [:]
        for table in try TOMLDocument(parsing: text).tables {
            for entry in table.entries { out["\(table.name).\(entry.key)"] = entry.value }
        }
        return out
    }

    @Test("values, keys, comments and lines")
    func accepted() throws {
        let text = """
            # comment
            top = 1
            [a]   # trailing comment
            int = -17
            hex = 0xff
            octal = 0o17
            binary = 0b101
            big = 1_000_000
            float = 6.25e-1
            negative-float = -0.5
            infinite = -inf
            yes = true
            no = false
            "quoted key" = "tab\\tquote\\" backslash\\\\ e\\u00e9 \\U0001F600"
            literal = 'C:\\path\\#not comment'
            list = [ "portrait",   # first
                     "landscape", ]
            empty = []
            nested = [[1, 2], [3]]

            ['b c']
            crlf = 2\r

            """
        let document = try TOMLDocument(parsing: text)
        #expect(document.tables.map(\.name) == ["", "a", "b c"])
        #expect(document.tables.map(\.line) == [1, 3, 21])
        #expect(document.tables[1].entries.first?.line == 4)
        let v = try values(text)
        #expect(v[".top"] == .integer(1))
        #expect(v["a.int"] == .integer(-17))
        #expect(v["a.hex"] == .integer(255))
        #expect(v["a.octal"] == .integer(15))
        #expect(v["a.binary"] == .integer(5))
        #expect(v["a.big"] == .integer(1_000_000))
        #expect(v["a.float"] == .float(0.625))
        #expect(v["a.negative-float"] == .float(-0.5))
        #expect(v["a.infinite"] == .float(-.infinity))
        #expect(v["a.yes"] == .boolean(true))
        #expect(v["a.no"] == .boolean(false))
        #expect(v["a.quoted key"] == .string("tab\tquote\" backslash\\ e\u{e9} \u{1F600}"))
        #expect(v["a.literal"] == .string("C:\\path\\#not comment"))
        #expect(v["a.list"] == .array([.string("portrait"), .string("landscape")]))
        #expect(v["a.empty"] == .array([]))
        #expect(v["a.nested"] == .array([.array([.integer(1), .integer(2)]), .array([.integer(3)])]))
        #expect(v["b c.crlf"] == .integer(2))
    }

    @Test(
        "invalid or unused TOML is an error with its line",
        arguments: [
            ("[a\n", 1, "expected ]"),
            ("[a]\nx = 1\nx = 2\n", 3, "defined twice"),
            ("[a]\n[a]\n", 2, "table [a] defined twice"),
            ("[a]\nx = hello\n", 2, "is not a TOML value"),
            ("[a]\nx = \"open\n", 2, "not closed"),
            ("[a]\nx = 'open\n", 2, "not closed"),
            ("[a]\nx = 1 2\n", 2, "unexpected"),
            ("[a]\nx = [1, 2\n", 3, "not closed"),
            ("[a]\nx = [1 2]\n", 2, "expected , or ]"),
            ("[a]\nx = \"\\q\"\n", 2, "invalid escape"),
            ("[a]\nx = \"\\u12\"\n", 2, "invalid \\u escape"),
            ("[a]\nx = 1979-05-27\n", 2, "dates and times"),
            ("[a]\nx = 07:32:00\n", 2, "dates and times"),
            ("[a]\nx = {y = 1}\n", 2, "inline tables"),
            ("[a]\nx = \"\"\"\nlong\"\"\"\n", 2, "multi-line strings"),
            ("[[a]]\n", 1, "arrays of tables"),
            ("[a]\nb.c = 1\n", 2, "dotted keys"),
            ("[a]\nx = 01\n", 2, "is not a TOML value"),
            ("[a]\nx = 1__0\n", 2, "is not a TOML value"),
            ("[a]\nx = .5\n", 2, "is not a TOML value"),
            ("[a]\nx = 5.\n", 2, "is not a TOML value"),
            ("[a]\nx =\n", 2, "expected a value"),
            ("[a]\n= 1\n", 2, "expected a key"),
        ])
    func rejected(text: String, line: Int, message: String) {
        do {
            _ = try TOMLDocument(parsing: text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line, "\(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
