"""What every section of the benchmark shares: the paths, the binaries under test, reading a
process's CPU time, context switches, memory and threads from /proc, a net.hadess.SensorProxy
claimant, the read log of sysfs attributes, and writing a section into docs/benchmarks.md.

The sections (comparison, kinds, power) import this module and peer.py, never each other;
`python3 -m bench [SECTION]` (bench/__main__.py) runs them."""
import ctypes
import json
import os
import platform
import select
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tests", "integration"))
from sensorproxy import INTERFACE, NAME, PATH  # noqa: E402 (it and testbed choose the GI versions)
from gi.repository import Gio, GLib  # noqa: E402

CORPUS = os.path.join(ROOT, "Tests", "Fixtures", "corpus")
ORIENTD = os.environ.get("ORIENTD", os.path.join(ROOT, ".build", "release", "orientd"))
BENCH = os.environ.get("ORIENTD_BENCH", os.path.join(ROOT, ".build", "release", "orientd-bench"))
G = 9.81
IN_ACCESS = 0x1


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    low, high = int(k), min(int(k) + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (k - low)


def log(message):
    print(message, file=sys.stderr, flush=True)


def read_messages(sock, buffer, timeout):
    """Complete JSON lines available within `timeout` (a dict of the socket's partial bytes is kept)."""
    ready, _, _ = select.select([sock], [], [], timeout)
    if not ready:
        return []
    chunk = sock.recv(1 << 20)
    if not chunk:
        raise EOFError
    buffer[sock] = buffer.get(sock, b"") + chunk
    *lines, buffer[sock] = buffer[sock].split(b"\n")
    return [json.loads(line) for line in lines if line]


def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid, key="VmRSS"):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def context_switches(pid):
    """Context switches per thread id (voluntary + involuntary); a thread that exits takes its count
    with it, so callers compare only threads present in both snapshots."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            counts[task] = sum(int(line.split()[1]) for line in open(f"/proc/{pid}/task/{task}/status") if "ctxt_switches" in line)
        except OSError:
            pass
    return counts


def cpu_seconds_by_thread(pid):
    """CPU seconds per thread id, with the thread's name: the scheduler's `se.sum_exec_runtime`
    (nanosecond resolution) where /proc/PID/task/TID/sched exists, else user + system ticks
    (10 ms resolution). Threads that exit take theirs with them, so callers compare only
    threads present in both snapshots."""
    out = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            text = open(f"/proc/{pid}/task/{task}/stat").read()
            sched = open(f"/proc/{pid}/task/{task}/sched").read() if os.path.exists(f"/proc/{pid}/task/{task}/sched") else ""
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        runtime = [line.split(":")[1] for line in sched.splitlines() if line.startswith("se.sum_exec_runtime")]
        if runtime:
            out[task] = (name, float(runtime[0]) / 1000)
        else:
            fields = text.rsplit(")", 1)[1].split()
            out[task] = (name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out


def thread_role(name):
    """What a thread of orientd does, from the name it was given (or the runtime's default)."""
    if name.startswith("orientd-poll"):
        return "sensor poll thread (sysfs reads, detector)"
    if name.startswith("NIO-"):
        return "event loop (resolver, clients, silence checks)"
    if "qos" in name:
        return "libdispatch/Swift pool (udev monitor, signals)"
    return "other"


def thread_names(pid):
    names = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            names[task] = open(f"/proc/{pid}/task/{task}/comm").read().strip()
        except OSError:
            pass
    return names


def process_runtime(pid):
    """The process's CPU-time clock (clock_getcpuclockid): the scheduler's runtime of all its
    threads, those that have ended included, in nanoseconds (the per-thread files lose a thread's
    time when it ends, and the daemons' thread pools start and end threads)."""
    libc = ctypes.CDLL(None, use_errno=True)
    clock = ctypes.c_int()
    error = libc.clock_getcpuclockid(pid, ctypes.byref(clock))
    if error:
        raise OSError(error, f"clock_getcpuclockid {pid}")
    return time.clock_gettime(clock.value)


def load(pid):
    return dict(cpu=cpu_seconds(pid), runtime=process_runtime(pid), switches=context_switches(pid), wall=time.monotonic())


def cost_since(pid, before):
    after = load(pid)
    wall = after["wall"] - before["wall"]
    names = thread_names(pid)
    by_thread = {}
    # A thread started meanwhile counts with all its switches; one that ended takes its own away.
    for task, count in after["switches"].items():
        name = names.get(task, "?")
        by_thread[name] = by_thread.get(name, 0) + (count - before["switches"].get(task, 0)) / wall
    return dict(cpu_per_minute=(after["cpu"] - before["cpu"]) * 60 / wall, runtime_per_minute=(after["runtime"] - before["runtime"]) * 60 / wall,
                wakeups=sum(by_thread.values()), by_thread=by_thread)


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown CPU")
    return f"{model}, {os.cpu_count()} cores, Linux {platform.release()}"


def peer_version():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "iio-sensor-proxy"], capture_output=True, text=True).stdout
    return out or "?"


def mark(ok):
    return "met" if ok else "**missed**"


def write_section(marker, heading, section):
    """Replaces the text between `<!-- MARKER:begin -->` and `<!-- MARKER:end -->` in
    docs/benchmarks.md (`section` includes both), or appends it under `heading`."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    text = open(path).read()
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    if begin in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + f"\n\n## {heading}\n\n" + section + "\n"
    open(path, "w").write(text)
    print(section)


def real_path(bed, syspath, attribute):
    return os.path.join(bed.root, syspath.lstrip("/"), attribute)


class AccessLog:
    """Every read(2) of the given files, by any process, timestamped (inotify IN_ACCESS): how often
    a daemon reads each attribute, measured rather than taken from its source."""

    def __init__(self, paths):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.labels, self.times = {}, {label: [] for label in paths}
        for label, path in paths.items():
            wd = self.libc.inotify_add_watch(self.fd, path.encode(), IN_ACCESS)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            self.labels[wd] = label
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import select
        while not self.stopping:
            if not select.select([self.fd], [], [], 0.2)[0]:
                continue
            data = os.read(self.fd, 65536)
            now = time.monotonic()
            offset = 0
            while offset < len(data):
                wd, mask, _, length = struct.unpack_from("iIII", data, offset)
                offset += 16 + length
                if mask & IN_ACCESS and wd in self.labels:
                    self.times[self.labels[wd]].append(now)

    def mark(self):
        return {label: len(times) for label, times in self.times.items()}

    def interval(self, label, since=None):
        """The median time between two reads of the file (since a `mark()`), or None."""
        times = self.times[label][(since or {}).get(label, 0):]
        gaps = [b - a for a, b in zip(times, times[1:])]
        return percentile(gaps, 50) if gaps else None

    def close(self):
        self.stopping = True
        self.thread.join()
        os.close(self.fd)


class Claimant:
    """A net.hadess.SensorProxy client on its own connection to the private bus. Its
    PropertiesChanged signals are timestamped (CLOCK_MONOTONIC) as they are dispatched, on a GLib
    main loop of its own thread; the same client for both daemons."""

    def __init__(self, bus):
        self.changes = []
        self.condition = threading.Condition()
        self.context = GLib.MainContext.new()
        self.context.push_thread_default()  # the signal is dispatched on this context's loop
        try:
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            self.connection = Gio.DBusConnection.new_for_address_sync(bus.address, flags, None, None)
            self.connection.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", PATH, None,
                                             Gio.DBusSignalFlags.NONE, self._changed)
        finally:
            self.context.pop_thread_default()
        self.loop = GLib.MainLoop.new(self.context, False)
        self.thread = threading.Thread(target=self.loop.run, daemon=True)
        self.thread.start()

    def _changed(self, connection, sender, path, interface, signal, parameters):
        when = time.monotonic()
        _, changed, _ = parameters.unpack()
        with self.condition:
            self.changes.append((when, changed))
            self.condition.notify_all()

    def call(self, member, timeout=10):
        return self.connection.call_sync(NAME, PATH, INTERFACE, member, None, None, Gio.DBusCallFlags.NONE, int(timeout * 1000), None)

    def get(self, prop):
        reply = self.connection.call_sync(NAME, PATH, "org.freedesktop.DBus.Properties", "Get", GLib.Variant("(ss)", (INTERFACE, prop)),
                                          None, Gio.DBusCallFlags.NONE, 2000, None)
        return reply.unpack()[0]

    def wait(self, predicate, since, timeout):
        """The time of the first signal from index `since` on whose changed properties satisfy
        `predicate`; None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for when, changed in self.changes[since:]:
                    if predicate(changed):
                        return when
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.condition.wait(remaining)

    def close(self):
        self.loop.quit()
        self.thread.join()
        self.connection.close_sync(None)
