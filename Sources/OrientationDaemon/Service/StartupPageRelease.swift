import NIOCore
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// Hands the start-up's code pages back to the kernel once the daemon is ready.
///
/// Why: the kernel maps a program's code in 64 KiB runs around every instruction it executes
/// (fault-around) and reads files ahead in larger runs still, so after start-up a self-contained
/// orientd has about 10 MiB of its 13 MiB of code resident although its steady state executes
/// about 1.5 MiB of it (measured with clear_refs, docs/install.md). Those pages are clean and the
/// kernel would reclaim them under memory pressure, but until then they count in the daemon's RSS
/// and in its control group's memory, which is what a device's owner sees. `MADV_PAGEOUT` (Linux 5.4)
/// reclaims them now; what the daemon then executes comes back on first use, once. Pages that other
/// processes map too (libc's) are left alone by the kernel, and writable mappings are never touched.
///
/// The daemon releases twice: at readiness, and a minute later, when the one-time work of the first
/// clients and detections (about 3 MiB of code, measured) is done too; after that the steady state
/// brings back only what it executes, with its fault-around.
public enum StartupPageRelease {
    /// From readiness to the second release.
    public static let secondReleaseDelay = TimeAmount.seconds(60)

    /// One line of /proc/self/maps that names a file mapped read-only (code or constants).
    public struct Mapping: Equatable, Sendable {
        public var start: UInt
        public var end: UInt
        public var path: String
        public var byteCount: UInt { end - start }
    }

    /// The read-only, file-backed mappings of a /proc/PID/maps text: code (`r-xp`) and constants
    /// (`r--p`) of the executable and its libraries. Writable and anonymous mappings, and the
    /// kernel's own ([vdso], [vvar]), are left out.
    public static func readOnlyFileMappings(maps: String) -> [Mapping] {
        maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1] == "r-xp" || fields[1] == "r--p" else { return nil }
            let path = fields[5].trimmingPrefixSpaces()
            guard path.hasPrefix("/") else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                end > start
            else { return nil }
            return Mapping(start: start, end: end, path: String(path))
        }
    }

    /// What a release did: how much was advised, and the first refusal (an older kernel says EINVAL).
    public struct Outcome: Sendable {
        public var advisedBytes: UInt
        public var residentKiBBefore: Int?
        public var residentKiBAfter: Int?
        public var failure: String?
    }

    /// Advises the kernel to reclaim this process's read-only file pages now.
    public static func releaseNow() -> Outcome {
        let before = residentKiB()
        guard let maps = readWholeFile("/proc/self/maps") else {
            return Outcome(
                advisedBytes: 0, residentKiBBefore: before, residentKiBAfter: before,
                failure: "/proc/self/maps is not readable")
        }
        var advised: UInt = 0
        var failure: String?
        for mapping in readOnlyFileMappings(maps: maps) {
            if madvise(
                UnsafeMutableRawPointer(bitPattern: mapping.start), Int(mapping.byteCount), 21 /* MADV_PAGEOUT */) == 0
            {
                advised += mapping.byteCount
            } else if failure == nil {
                failure = "madvise(MADV_PAGEOUT) on \(mapping.path): \(String(cString: strerror(errno)))"
            }
        }
        return Outcome(
            advisedBytes: advised, residentKiBBefore: before, residentKiBAfter: residentKiB(), failure: failure)
    }

    /// VmRSS of /proc/self/status, in KiB.
    static func residentKiB() -> Int? {
        guard let status = readWholeFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// A /proc file read whole, or nil.
    private static func readWholeFile(_ path: String) -> String? {
        try? WholeFile.read(path).map { String(decoding: $0, as: UTF8.self) }.get()
    }
}

extension Substring {
    fileprivate func trimmingPrefixSpaces() -> Substring { drop(while: { $0 == " " }) }
}
