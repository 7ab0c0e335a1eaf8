import Logging
import OrientationCore
import SensorCore

/// An unusable configuration file: where, what, and the form expected.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let message: String

    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

/// The configuration file (`/etc/orientd/orientd.toml`): TOML with the tables and keys of
/// ``DaemonSetting/all``. Unknown tables and keys, wrong types and bad values are errors that name
/// the file, the line and the expected form.
public enum ConfigurationFile {
    public static let defaultPath = "/etc/orientd/orientd.toml"

    /// Reads `path` over `base` (the defaults).
    public static func load(
        path: String, over base: ServeSettings = ServeSettings()
    ) throws(ConfigurationError) -> ServeSettings {
        switch WholeFile.read(path) {
        case .success(let bytes): return try parse(String(decoding: bytes, as: UTF8.self), file: path, over: base)
        case .failure(let error): throw ConfigurationError(file: path, line: nil, message: "cannot read: \(error)")
        }
    }

    /// The settings `text` gives, over `base`; `file` names it in errors.
    public static func parse(
        _ text: String, file: String, over base: ServeSettings = ServeSettings()
    ) throws(ConfigurationError) -> ServeSettings {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, message: "not valid TOML: \(error.message)")
        }
        let tableNames = DaemonSetting.tables.map(\.name)
        func fail(_ setting: DaemonSetting, line: Int?, _ problem: String) -> ConfigurationError {
            ConfigurationError(
                file: file, line: line, message: "\(setting.name): \(problem) (expected \(setting.expected))")
        }
        var settings = base
        var detectorLines: [String: Int] = [:]
        var hingeLines: [String: Int] = [:]
        for table in document.tables {
            guard !table.name.isEmpty else {
                throw ConfigurationError(
                    file: file, line: table.entries.first?.line,
                    message:
                        """
                        key \"\(table.entries[0].key)\" is outside a table (tables: \
                        \(tableNames.joined(separator: ", ")))
                        """
                )
            }
            let known = DaemonSetting.all.filter { $0.table == table.name }
            guard !known.isEmpty else {
                throw ConfigurationError(
                    file: file, line: table.line,
                    message: "unknown table [\(table.name)] (tables: \(tableNames.joined(separator: ", ")))")
            }
            for entry in table.entries {
                guard let setting = known.first(where: { $0.key == entry.key }) else {
                    throw ConfigurationError(
                        file: file, line: entry.line,
                        message:
                            """
                            [\(table.name)]: unknown key \"\(entry.key)\" (keys: \
                            \(known.map(\.key).sorted().joined(separator: ", ")))
                            """
                    )
                }
                do {
                    try setting.readFile(entry.value, &settings)
                } catch {
                    throw fail(setting, line: entry.line, error.description)
                }
                if table.name == "detector" { detectorLines[entry.key] = entry.line }
                if table.name == "hinge" { hingeLines[entry.key] = entry.line }
            }
        }
        // The detector's parameters are checked together (some bound each other).
        do {
            try settings.daemon.detector.validate()
        } catch {
            guard case .outOfRange(let name, _) = error,
                let setting = DaemonSetting.all.first(where: { $0.table == "detector" && $0.key == name })
            else {
                throw ConfigurationError(file: file, line: nil, message: "[detector]: \(error.description)")
            }
            throw fail(setting, line: detectorLines[name], error.description)
        }
        let hinge = settings.daemon.hinge
        if hinge.laptopBelow >= hinge.tabletAbove,
            let setting = DaemonSetting.all.first(where: { $0.table == "hinge" && $0.key == "laptop-below" })
        {
            throw fail(
                setting, line: hingeLines["laptop-below"] ?? hingeLines["tablet-above"],
                """
                laptop-below (\(hinge.laptopBelow)) must be below tablet-above (\(hinge.tabletAbove)): between \
                them nothing changes
                """
            )
        }
        return settings
    }

    /// `settings` as the file writes them (`orientd check-config`): every table, every key that
    /// has a value.
    /// The same settings as ``render(_:)``, as log metadata (`table.key`: the value as the file
    /// writes it), for the daemon's one debug line at start.
    public static func metadata(_ settings: ServeSettings) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for setting in DaemonSetting.all {
            if let value = setting.value(in: settings) { metadata["\(setting.table).\(setting.key)"] = .string(value) }
        }
        return metadata
    }

    public static func render(_ settings: ServeSettings) -> String {
        DaemonSetting.tables.compactMap { table in
            let lines = DaemonSetting.all.filter { $0.table == table.name }.compactMap { setting in
                setting.value(in: settings).map { "\(setting.key) = \($0)" }
            }
            return lines.isEmpty ? nil : "[\(table.name)]\n" + lines.joined(separator: "\n") + "\n"
        }.joined(separator: "\n")
    }

    /// The commented example (`systemd/orientd.toml`, installed as /etc/orientd/orientd.toml):
    /// every setting with its help and its default; those without a default commented out.
    public static var example: String {
        let defaults = ServeSettings()
        var text = """
            # orientd configuration: /etc/orientd/orientd.toml
            #
            # Every setting is shown with its default. Options given on the command line override this file;
            # `orientd check-config` validates it and prints the effective configuration. An invalid file stops
            # the daemon with the file, the line and the expected form (exit status 78).

            """
        for table in DaemonSetting.tables {
            text += "\n[\(table.name)]\n"
            if !table.about.isEmpty { text += comment(table.about) }
            for setting in DaemonSetting.all where setting.table == table.name {
                text += comment(setting.help)
                if let value = setting.value(in: defaults) {
                    text += "\(setting.key) = \(value)\n"
                } else {
                    text += "# \(setting.key) = \"\(setting.valueName)\"\n"
                }
            }
        }
        return text
    }

    /// orientd.toml(5): the file's manual page in troff, from the same table as the example.
    public static func manualPage(version: String) -> String {
        func roff(_ text: String) -> String {
            var escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
            if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
            return escaped
        }
        let description = """
            orientd serve reads this file at start (or the file given with --config) and again on SIGHUP. \
            Settings come from the defaults, then this file, then the options given on the command line. The \
            file is TOML: [table] headers, key = value lines, # comments. An unknown table or key, a wrong type \
            or a bad value stops the daemon with the file, the line and the expected form (exit status 78); \
            orientd check-config validates a file and prints the effective configuration, and orientd \
            check-config --example prints a commented file with every default.
            """
        var page = """
            .TH ORIENTD.TOML 5 "" "orientd \(version)" "File Formats"
            .SH NAME
            orientd.toml \\- configuration file of the orientd accelerometer daemon
            .SH SYNOPSIS
            .B \(roff(defaultPath))
            .SH DESCRIPTION
            \(roff(description))

            """
        for table in DaemonSetting.tables {
            page += ".SS \"[\(table.name)]\"\n"
            if !table.about.isEmpty { page += roff(table.about) + "\n" }
            for setting in DaemonSetting.all where setting.table == table.name {
                let value = setting.value(in: ServeSettings()).map { " = \($0)" } ?? ""
                page += ".TP\n.B \(roff(setting.key + value))\n\(roff(setting.help))\n"
                page += ".br\n\(roff("Expected: \(setting.expected)."))"
                if let option = setting.option { page += " " + roff("Option: --\(option).") }
                page += "\n"
            }
        }
        page += """
            .SH FILES
            .TP
            .B \(roff(defaultPath))
            \(roff("The configuration; a commented example with every default is installed there."))
            .SH SEE ALSO
            .BR orientd (8),
            .BR orientctl (1)

            """
        return page
    }

    /// `text` as comment lines of at most 100 columns.
    private static func comment(_ text: String) -> String {
        var lines: [String] = []
        var line = "#"
        for word in text.split(separator: " ") {
            if line.count + 1 + word.count > 100 {
                lines.append(line)
                line = "#"
            }
            line += " " + word
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}

#if canImport(Glibc)
import Glibc
#endif
