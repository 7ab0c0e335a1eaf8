// The floor under a polling sensor daemon: sysfs attributes read at fixed intervals and nothing
// else (no parsing, no D-Bus, no udev). `make bench` runs it beside orientd and iio-sensor-proxy at
// the intervals measured for each, and compares their CPU time and wake-ups with its own.
//
//   poll INTERVAL_SECONDS PATH[,PATH…] [INTERVAL_SECONDS PATH[,PATH…]]…
//
// Each group's files are opened once and read with one pread(2) each at every tick of the group's
// clock; one thread sleeps with clock_nanosleep(TIMER_ABSTIME) until the next tick of any group.
import Glibc

struct Group {
    let interval: Int64
    var next: Int64
    let descriptors: [Int32]
}

func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard !arguments.isEmpty, arguments.count % 2 == 0 else {
    fputs("usage: poll INTERVAL_SECONDS PATH[,PATH…] …\n", stderr)
    exit(2)
}
var groups: [Group] = []
let start = now()
while !arguments.isEmpty {
    let seconds = Double(arguments.removeFirst()) ?? 0
    let paths = arguments.removeFirst().split(separator: ",").map(String.init)
    guard seconds > 0 else {
        fputs("poll: the interval must be a number of seconds above 0\n", stderr)
        exit(2)
    }
    let descriptors = paths.map { path -> Int32 in
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            fputs("poll: cannot open \(path)\n", stderr)
            exit(1)
        }
        return fd
    }
    groups.append(Group(interval: Int64(seconds * 1e9), next: start, descriptors: descriptors))
}
print("ready")
fflush(nil)

var buffer = [UInt8](repeating: 0, count: 64)
while true {
    let current = now()
    for index in groups.indices where groups[index].next <= current {
        for fd in groups[index].descriptors {
            _ = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        }
        while groups[index].next <= current {
            groups[index].next += groups[index].interval
        }
    }
    let due = groups.map(\.next).min()!
    var deadline = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
}
