import Testing
@testable import OrientationDaemon

@Suite("Start-up page release")
struct StartupPageReleaseTests {
    static let maps = """
        55d0c0a00000-55d0c1b37000 r-xp 00000000 fe:00 5351446                    /usr/bin/orientd
        55d0c1b37000-55d0c1bb4000 r--p 01137000 fe:00 5351446                    /usr/bin/orientd
        55d0c1bb4000-55d0c1de6000 rw-p 011b4000 fe:00 5351446                    /usr/bin/orientd
        55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0                          [heap]
        7f1a2c000000-7f1a2c021000 rw-p 00000000 00:00 0 
        7f1a30028000-7f1a301bd000 r-xp 00028000 fe:00 1836                       /usr/lib/x86_64-linux-gnu/libc.so.6
        7f1a301bd000-7f1a30215000 r--p 001bd000 fe:00 1836                       /usr/lib/x86_64-linux-gnu/libc.so.6
        7f1a30300000-7f1a30301000 r--p 00000000 fe:00 99                         /var/lib/a file with spaces (deleted)
        7ffd1e5f0000-7ffd1e5f4000 r--p 00000000 00:00 0                          [vvar]
        7ffd1e5f4000-7ffd1e5f6000 r-xp 00000000 00:00 0                          [vdso]
        ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
        """

    @Test("only read-only file mappings are chosen: code and constants, never data, heaps or the kernel's own")
    func choosesReadOnlyFileMappings() {
        let chosen = StartupPageRelease.readOnlyFileMappings(maps: Self.maps)
        #expect(
            chosen.map(\.path) == [
                "/usr/bin/orientd", "/usr/bin/orientd",
                "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "/var/lib/a file with spaces (deleted)",
            ])
        #expect(chosen[0] == .init(start: 0x55d0c0a00000, end: 0x55d0c1b37000, path: "/usr/bin/orientd"))
        #expect(chosen[0].byteCount == 0x1137000)
    }

    @Test("malformed lines are skipped, not guessed at")
    func skipsMalformedLines() {
        let maps = "zz-55d0c1b37000 r-xp 00000000 fe:00 1 /bin/x\n10-08 r-xp 00000000 fe:00 1 /bin/y\n\nr-xp /bin/z\n"
        #expect(StartupPageRelease.readOnlyFileMappings(maps: maps).isEmpty)
    }

    @Test("on this kernel the release is accepted for every chosen mapping, and reads the process's RSS")
    func releasesInThisProcess() {
        let outcome = StartupPageRelease.releaseNow()
        #expect(outcome.failure == nil)
        #expect(outcome.advisedBytes > 0)
        #expect(outcome.residentKiBBefore != nil && outcome.residentKiBAfter != nil)
    }
}
