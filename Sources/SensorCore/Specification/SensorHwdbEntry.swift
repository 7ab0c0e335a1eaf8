import OrientationCore

/// An entry of systemd's sensor hwdb (`60-sensor.hwdb`'s format) giving one device its
/// `ACCEL_MOUNT_MATRIX`: what `orientd calibrate` prints and, with `--write`, installs in
/// `/etc/udev/hwdb.d/61-sensor-local.hwdb`.
///
/// systemd's `60-sensor.rules` looks a sensor up as `sensor:modalias:<parent modalias>:<DMI
/// modalias>`, or, when the IIO device has a `label` (recent systemd), as `sensor:<label>:modalias:…`. The
/// match keys are written the way the upstream entries are: the parent's modalias, then the
/// machine's vendor and product from the DMI modalias (`svn…:pn…`), everything else a wildcard.
public struct SensorHwdbEntry: Sendable, Hashable {
    /// What identifies the sensor to udev.
    public struct Identity: Sendable, Hashable {
        /// The `modalias` of the nearest usb, i2c or platform parent (`acpi:BOSC0200:BOSC0200:`).
        public var parentModalias: String
        /// `/sys/class/dmi/id/modalias`; nil on machines without DMI (device-tree boards).
        public var dmiModalias: String?
        /// The IIO device's `label` attribute, if it has one.
        public var label: String?

        public init(parentModalias: String, dmiModalias: String?, label: String?) {
            self.parentModalias = parentModalias
            self.dmiModalias = dmiModalias
            self.label = label
        }

        /// The strings udev looks up for this device (`systemd-hwdb query` takes them).
        public var lookupKeys: [String] {
            let tail = "modalias:\(parentModalias):\(dmiModalias ?? "")"
            return label.map { ["sensor:\($0):\(tail)"] } ?? ["sensor:\(tail)"]
        }

        /// The vendor (`svn`) and product (`pn`) fields of the DMI modalias.
        public var machine: (vendor: String, product: String)? {
            guard let dmiModalias else { return nil }
            // Fields are `key` + value, split by ':' (the kernel drops colons from the values).
            var fields: [String: String] = [:]
            for field in dmiModalias.split(separator: ":") {
                for key in ["svn", "pn"] where field.hasPrefix(key) && fields[key] == nil {
                    fields[key] = String(field.dropFirst(key.count))
                }
            }
            guard let vendor = fields["svn"], let product = fields["pn"] else { return nil }
            return (vendor, product)
        }
    }

    public var identity: Identity
    public var matrix: MountMatrix
    /// Comment lines above the entry (without `# `): which device, how it was found.
    public var comment: [String]

    public init(identity: Identity, matrix: MountMatrix, comment: [String] = []) {
        self.identity = identity
        self.matrix = matrix
        self.comment = comment
    }

    /// The match lines: the modalias form, plus the label form where the device has a label
    /// (recent systemd rules look a labelled sensor up by that form only; older ones by the
    /// modalias form).
    public var matchKeys: [String] {
        var parent = Self.pattern(identity.parentModalias)
        while parent.hasSuffix(":") { parent.removeLast() }
        let machine =
            identity.machine.map { ":dmi:*svn\(Self.pattern($0.vendor)):pn\(Self.pattern($0.product)):*" } ?? ""
        let tail = "modalias:\(parent)*\(machine)"
        return ["sensor:\(tail)"] + (identity.label.map { ["sensor:\(Self.pattern($0)):\(tail)"] } ?? [])
    }

    /// The entry's lines, ending with a newline.
    public var text: String {
        (comment.map { "# \($0)" } + matchKeys + [" ACCEL_MOUNT_MATRIX=\(matrix.text)"]).joined(separator: "\n") + "\n"
    }

    /// The heading of a file `orientd calibrate` creates.
    public static let fileHeader = """
        # Local sensor entries (systemd's hwdb format, see 60-sensor.hwdb).
        # `orientd calibrate --write` replaces its own entry for a device and keeps everything else.
        # After editing: systemd-hwdb update; udevadm trigger -v -p DEVNAME=/dev/iio:deviceN

        """

    /// The contents of a hwdb file with this entry in place of every earlier entry that has one of
    /// its match keys; every other entry, comment and blank line stays as it was.
    public func installed(in existing: String?) -> String {
        guard let existing, !existing.isEmpty else { return Self.fileHeader + "\n" + text }
        let keys = Set(matchKeys)
        var blocks: [[Substring]] = [[]]
        for line in existing.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                blocks.append([line])
            } else {
                blocks[blocks.count - 1].append(line)
            }
        }
        // A block is a blank line (or the start) and the lines up to the next blank line; an
        // entry is a block whose match lines include one of ours.
        let kept = blocks.filter { block in !block.contains { keys.contains(String($0)) } }
        var text = kept.map { $0.joined(separator: "\n") }.joined(separator: "\n")
        while text.hasSuffix("\n") { text.removeLast() }
        return text + "\n\n" + self.text
    }

    /// A hwdb match pattern for a literal value: fnmatch's special characters become `?`.
    private static func pattern(_ value: String) -> String {
        String(value.map { "*?[]".contains($0) ? "?" : $0 })
    }
}
