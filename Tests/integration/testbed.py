"""A simulated sysfs and udev (umockdev) with IIO accelerometers, and the orientd binary run on it.

The real libudev and libiio inside orientd read this tree through umockdev's preload library, so
discovery, reads, buffered capture and hotplug take the same code path as on a device.
"""
import atexit
import ctypes
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORIENTD = os.environ.get("ORIENTD", os.path.join(ROOT, ".build", "debug", "orientd"))
NOBODY = 65534
G = 9.81
IIO_GET_EVENT_FD_IOCTL = 0x80046990  # _IOR('i', 0x90, int), linux/iio/events.h


# What Swift prints for a value that has no description of its own: `Optional("x")`,
# `ExitCode(rawValue: 78)`, `SensorConfiguration(rate: 25, …)`, `trace("path")`, `Foo()`.
SWIFT_DUMP = re.compile(r'Optional\(|\w\((?:[a-z_]\w*: |"|\))')


def assert_in_words(lines, who="orientd"):
    """Every line orientd wrote to standard error (its log, its messages) is in words: no Swift
    value printed by reflection. Checked whenever a test stops a daemon or a command it ran."""
    dumps = [line for line in lines if SWIFT_DUMP.search(line)]
    if dumps:
        raise AssertionError(f"{who} printed Swift values instead of words: {dumps[:5]}")


def rss_anon_kib(pid):
    """A daemon's anonymous resident memory (heaps, stacks), where a leak shows. Not VmRSS: the
    daemon hands its code pages back to the kernel after start-up and they come back as it serves,
    so its file-backed RSS grows by itself without any leak."""
    with open(f"/proc/{pid}/status") as status:
        return next((int(line.split()[1]) for line in status if line.startswith("RssAnon:")), 0)


def changes_user(test):
    """Marks a test, or a class of tests, that runs something as another user. Such a test runs
    what it runs from reachable_by_everyone(), since the checkout may be closed to that user (mode
    0700, as `mktemp -d`, /root and many home directories are); scripts/test/test-private-checkout runs
    every marked test from such a checkout."""
    test.changes_user = True
    return test


def as_another_user(test, uid=NOBODY, gid=None, groups=None):
    """The command prefix that runs a program as `uid` (group `gid`, supplementary `groups` or
    none), for a test marked with @changes_user: an unmarked test fails here, so that no test
    changes user without scripts/test/test-private-checkout running it."""
    method = getattr(type(test), test._testMethodName)
    if not (getattr(type(test), "changes_user", False) or getattr(method, "changes_user", False)):
        raise AssertionError(f"{test.id()} runs something as another user: mark it @changes_user")
    gid = uid if gid is None else gid
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}"] + (["--groups", groups] if groups else ["--clear-groups"])


_everyone_directory = None


def reachable_by_everyone(path):
    """A copy of `path` (a program, or a directory's Python modules) that every user can read and
    run, in a directory of this run's (mode 0755, removed at exit). setpriv itself reaches a
    program in a closed checkout (it keeps root's capabilities until the exec), but nothing the
    program then opens there: Python's modules, or anything a program reads beside itself."""
    global _everyone_directory
    if _everyone_directory is None:
        _everyone_directory = tempfile.mkdtemp(prefix="orientd-tests-shared-")
        os.chmod(_everyone_directory, 0o755)
        atexit.register(shutil.rmtree, _everyone_directory, True)
    copy = os.path.join(_everyone_directory, os.path.basename(path.rstrip("/")))
    if not os.path.exists(copy):
        if os.path.isdir(path):
            shutil.copytree(path, copy, ignore=lambda _, names: [n for n in names if not n.endswith(".py")])
            for name in os.listdir(copy):
                os.chmod(os.path.join(copy, name), 0o644)
            os.chmod(copy, 0o755)
        else:
            shutil.copy2(path, copy)
            os.chmod(copy, 0o755)
    return copy


def motion_event(modifier=1, event_type=1, direction=1, timestamp=0):
    """One struct iio_event_data: an accelerometer (IIO_ACCEL, 3) event, by default mma8452's
    transient detection on x (IIO_MOD_X, IIO_EV_TYPE_MAG, IIO_EV_DIR_RISING)."""
    code = event_type << 56 | direction << 48 | modifier << 40 | 3 << 32
    return struct.pack("=Qq", code, timestamp)


IN_ACCESS = 0x1
IN_MODIFY = 0x2


def inotify_watch(path, mask):
    """A nonblocking inotify descriptor watching `path` for `mask`; the caller closes it."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
    watched = fd >= 0 and libc.inotify_add_watch(fd, path.encode(), mask) >= 0
    assert watched, f"inotify on {path}: errno {ctypes.get_errno()}"
    return fd


class ReadCounter:
    """Counts read(2)s of one file by any process (inotify IN_ACCESS)."""

    def __init__(self, path):
        self.fd = inotify_watch(path, IN_ACCESS)

    def _forget_earlier(self):
        os.read(self.fd, 65536) if select.select([self.fd], [], [], 0)[0] else None

    def _reads_within(self, seconds):
        """The reads reported within `seconds` (0 when none came)."""
        if seconds <= 0 or not select.select([self.fd], [], [], seconds)[0]:
            return 0
        data = os.read(self.fd, 65536)
        return sum(1 for offset in range(0, len(data), 16) if struct.unpack_from("iIII", data, offset)[1] & IN_ACCESS)

    def count(self, seconds):
        """Reads of the file during the next `seconds` (a measurement window, not a synchronisation)."""
        self._forget_earlier()
        reads, deadline = 0, time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            reads += self._reads_within(remaining)
        return reads

    def wait_for_reads(self, count, what, timeout=10):
        """Returns once the file has been read `count` times from now (an event awaited, not a sleep)."""
        self._forget_earlier()
        reads, deadline = 0, time.monotonic() + timeout
        while reads < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{what}: {reads} of {count} reads within {timeout} s")
            reads += self._reads_within(remaining)

    def wait_for_quiet(self, seconds, what, timeout=15):
        """Returns once `seconds` pass without a read of the file (something switched off: the
        quiet is the event awaited, each window a measurement)."""
        deadline = time.monotonic() + timeout
        while self.count(seconds):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: still read after {timeout} s")

    def close(self):
        os.close(self.fd)


class AttributeWatcher:
    """Wakes on each write to one file by any process (inotify IN_MODIFY), to see a value the daemon
    holds only for a moment (a rate asked for while the device moves): polled every half second, a
    fast phase of 0.4 s on a loaded machine could pass unseen."""

    def __init__(self, bed, path, name):
        self.read = lambda: bed.attribute(path, name)
        self.path = os.path.join(bed.root, path.lstrip("/"), name)
        self.fd = inotify_watch(self.path, IN_MODIFY)

    def wait_for(self, value, what, timeout=10):
        """Returns once the file holds `value`, checked now and at each write (an event awaited)."""
        deadline = time.monotonic() + timeout
        seen = []
        while (current := self.read()) != value:
            seen.append(current)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{what}: {self.path} never held {value!r} within {timeout} s (held {seen[-5:]})")
            if select.select([self.fd], [], [], remaining)[0]:
                os.read(self.fd, 65536)

    def close(self):
        os.close(self.fd)


class Testbed:
    """A umockdev testbed holding IIO devices."""

    def __init__(self):
        self.bed = UMockdev.Testbed.new()
        self.root = self.bed.get_root_dir()
        self.fifos = {}

    def env(self, **extra):
        env = dict(os.environ, LD_PRELOAD="libumockdev-preload.so.0", UMOCKDEV_DIR=self.root)
        env.update(extra)
        return env

    def add_accelerometer(self, number, name="bmi160", raw=(0, -1000, 0), scale="0.009810", attributes=None,
                          properties=None, per_axis_scale=None, offset=None, buffered=False, raw_channels=True,
                          sampling=("25", "12.5 25 50 100"), timestamp_clock=None, trigger=None, parent=None):
        """Adds iio:deviceN; `raw` is (x, y, z) in raw units, `scale` the shared m/s² per unit."""
        attrs = ["name", f"{name}\n"]
        if raw_channels:
            for axis, value in zip("xyz", raw):
                attrs += [f"in_accel_{axis}_raw", f"{value}\n"]
        if scale is not None:
            attrs += ["in_accel_scale", f"{scale}\n"]
        for axis, value in (per_axis_scale or {}).items():
            attrs += [f"in_accel_{axis}_scale", f"{value}\n"]
        for axis, value in (offset or {}).items():
            attrs += [f"in_accel_{axis}_offset", f"{value}\n"]
        if sampling:
            attrs += ["sampling_frequency", f"{sampling[0]}\n", "sampling_frequency_available", f"{sampling[1]}\n"]
        if buffered:
            attrs += ["buffer/length", "1\n", "buffer/enable", "0\n", "trigger/current_trigger", "\n"]
            for index, axis in enumerate("xyz"):
                attrs += [f"scan_elements/in_accel_{axis}_en", "0\n", f"scan_elements/in_accel_{axis}_index", f"{index}\n",
                          f"scan_elements/in_accel_{axis}_type", "le:s16/16>>0\n"]
            attrs += ["scan_elements/in_timestamp_en", "0\n", "scan_elements/in_timestamp_index", "3\n",
                      "scan_elements/in_timestamp_type", "le:s64/64>>0\n"]
        if timestamp_clock:
            attrs += ["current_timestamp_clock", f"{timestamp_clock}\n"]
        for key, value in (attributes or {}).items():
            attrs += [key, value if value.endswith("\n") else value + "\n"]
        props = ["DEVNAME", f"/dev/iio:device{number}"]
        for key, value in (properties or {}).items():
            props += [key, value]
        path = self.bed.add_device("iio", f"iio:device{number}", parent, attrs, props)
        if buffered:
            self.make_buffer_node(number)
        if trigger:
            self.bed.add_device("iio", f"trigger{number}", None, ["name", f"{trigger}\n"], [])
        return path

    def make_buffer_node(self, number):
        """/dev/iio:deviceN as a FIFO: what the test writes into it, libiio reads as the buffer."""
        node = os.path.join(self.root, "dev", f"iio:device{number}")
        os.makedirs(os.path.dirname(node), exist_ok=True)
        if os.path.exists(node):
            os.unlink(node)
        os.mkfifo(node)
        self.fifos[number] = node

    def add_light(self, number, name="als", attributes=None, properties=None):
        """Adds iio:deviceN, an ambient light sensor with the given attributes (in_illuminance_input…)."""
        attrs = ["name", f"{name}\n"]
        for key, value in (attributes or {}).items():
            attrs += [key, value if value.endswith("\n") else value + "\n"]
        props = ["DEVNAME", f"/dev/iio:device{number}"]
        for key, value in (properties or {}).items():
            props += [key, value]
        return self.bed.add_device("iio", f"iio:device{number}", None, attrs, props)

    def add_buffered_channel(self, number, channel, name, scan_type="le:u32/32>>0", scale=None, trigger=True):
        """Adds iio:deviceN with one buffered channel and a timestamp, as HID sensor hubs have them
        (`in_intensity_both`, `in_rot_from_north_magnetic_tilt_comp`), a FIFO for its buffer node
        and, with `trigger`, its trigger NAME-devN. Scans are written with write_channel_scans."""
        attrs = ["name", f"{name}\n", "buffer/length", "1\n", "buffer/enable", "0\n", "trigger/current_trigger", "\n",
                 f"scan_elements/in_{channel}_en", "0\n", f"scan_elements/in_{channel}_index", "0\n",
                 f"scan_elements/in_{channel}_type", f"{scan_type}\n",
                 "scan_elements/in_timestamp_en", "0\n", "scan_elements/in_timestamp_index", "1\n",
                 "scan_elements/in_timestamp_type", "le:s64/64>>0\n"]
        if scale is not None:
            attrs += [f"in_{channel}_scale", f"{scale}\n"]
        path = self.bed.add_device("iio", f"iio:device{number}", None, attrs, ["DEVNAME", f"/dev/iio:device{number}"])
        self.make_buffer_node(number)
        if trigger:
            self.bed.add_device("iio", f"trigger{number}", None, ["name", f"{name}-dev{number}\n"], [])
        return path

    def write_channel_scans(self, number, values, signed=False):
        """Writes scans of one 32-bit channel and a timestamp into the device's buffer node."""
        fd = os.open(self.fifos[number], os.O_WRONLY | os.O_NONBLOCK)
        try:
            for value in values:
                os.write(fd, struct.pack("<i4xq" if signed else "<I4xq", value, time.monotonic_ns()))
        finally:
            os.close(fd)

    def add_proximity(self, number, raw=0, near_level=None, name="vcnl4000", udev_near_level=None, channel="in_proximity_raw"):
        """Adds iio:deviceN, a proximity sensor; the near level as sysfs attribute and/or udev property."""
        attributes = {channel: str(raw)}
        if near_level is not None:
            attributes["in_proximity_nearlevel"] = str(near_level)
        return self.add_light(number, name=name, attributes=attributes,
                              properties={"PROXIMITY_NEAR_LEVEL": str(udev_near_level)} if udev_near_level is not None else None)

    def add_input_accelerometer(self, number, values=(0, -256, 0), resolution=0, name="lis3lv02d", properties=None):
        """Adds /dev/input/eventN, an evdev accelerometer (ID_INPUT_ACCELEROMETER=1) whose EVIOCGABS
        answers `values` for ABS_X, ABS_Y and ABS_Z with `resolution` units per g (0: none given),
        through an umockdev ioctl record; returns the event device's sysfs path."""
        answers = [f"EVIOCGABS({axis}) 0 {struct.pack('<6i', value, -512, 512, 0, 0, resolution).hex().upper()}"
                   for axis, value in enumerate(values)]
        return self.add_input_device(number, f"platform/{name}", name, "abs=7", answers,
                                     {"ID_INPUT": "1", "ID_INPUT_ACCELEROMETER": "1", **(properties or {})})

    def add_input_device(self, number, parent, name, capabilities, ioctl_answers, properties=None):
        """Adds /dev/input/eventN under /sys/devices/PARENT/input/inputN (NAME and `name` = `name`,
        `capabilities` as "KIND=BITS", e.g. "sw=1"), answering ioctls by the lines of an umockdev
        ioctl record (`ioctl_answers`); `properties` are udev properties of both nodes. Returns the
        event device's sysfs path. No uevent is sent.
        The ioctl record (the driver) is in place before the node appears, as with a kernel
        driver: a daemon that enumerates meanwhile (it may, after a removal) must not open a node
        umockdev has no ioctl socket for, as umockdev's preload then ends the process."""
        record = os.path.join(self.root, f"event{number}.ioctl")
        with open(record, "w") as handle:
            handle.write("".join(line + "\n" for line in [f"@DEV /dev/input/event{number}", *ioctl_answers]))
        self.bed.load_ioctl(f"/dev/input/event{number}", record)
        udev = "".join(f"E: {key}={value}\n" for key, value in (properties or {}).items())
        node = f"/devices/{parent}/input/input{number}"
        self.bed.add_from_string(
            f"P: {node}/event{number}\nN: input/event{number}\n"
            f"E: DEVNAME=/dev/input/event{number}\nE: SUBSYSTEM=input\n{udev}\n"
            f"P: {node}\nE: SUBSYSTEM=input\nE: NAME=\"{name}\"\n{udev}"
            f"A: name={name}\\n\nA: capabilities/{capabilities}\\n\n")
        return f"/sys{node}/event{number}"

    def add_motion_interrupt(self, number):
        """/dev/iio:deviceN answers IIO_GET_EVENT_FD_IOCTL with the read end of a pipe, as the kernel
        answers with its event descriptor; returns the pipe's (read, write) ends. The read end must
        be passed to the daemon under the same number (pass_fds): umockdev returns only a number.
        Events are written into the write end as struct iio_event_data records (`motion_event`)."""
        read_end, write_end = os.pipe()
        handler = UMockdev.IoctlBase()

        def on_ioctl(_handler, client):
            if client.get_request() != IIO_GET_EVENT_FD_IOCTL:
                return False  # ENOTTY, as for an ioctl the driver does not know
            client.get_arg().resolve(0, 4).update(0, struct.pack("i", read_end))
            client.complete(0, 0)
            return True
        handler.connect("handle-ioctl", on_ioctl)
        self.bed.attach_ioctl(f"/dev/iio:device{number}", handler)
        node = os.path.join(self.root, "dev", f"iio:device{number}")  # after its ioctl socket, as add_input_device
        os.makedirs(os.path.dirname(node), exist_ok=True)
        open(node, "a").close()
        self.ioctl_handlers = getattr(self, "ioctl_handlers", []) + [handler]  # kept alive with the testbed
        return read_end, write_end

    def attribute(self, path, name):
        """An attribute's text, without the trailing newline, or the NUL libiio writes after values."""
        with open(os.path.join(self.root, path.lstrip("/"), name)) as handle:
            return handle.read().rstrip("\x00\n")

    def set_attribute(self, path, name, value):
        """Changes an attribute the way the kernel does: the same file, new text (a reader that
        keeps the file open sees it on its next read from offset 0). umockdev's own
        set_attribute replaces the file, which only a reader that reopens it would notice; it
        is used for attributes that do not exist yet. The text is written before the file is
        cut to length, so a reader in between sees the new first line."""
        text = (value if value.endswith("\n") else value + "\n").encode()
        try:
            fd = os.open(os.path.join(self.root, path.lstrip("/"), name), os.O_WRONLY)
        except FileNotFoundError:
            self.bed.set_attribute(path, name, text.decode())
            return
        try:
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
        finally:
            os.close(fd)

    def set_raw(self, path, x, y, z):
        for axis, value in zip("xyz", (x, y, z)):
            self.set_attribute(path, f"in_accel_{axis}_raw", str(value))

    def remove(self, path):
        self.bed.uevent(path, "remove")
        self.bed.remove_device(path)

    def write_scans(self, number, scans):
        """Writes (x, y, z, timestamp_ns) scans into the device's buffer node."""
        fd = os.open(self.fifos[number], os.O_WRONLY | os.O_NONBLOCK)
        try:
            for x, y, z, stamp in scans:
                os.write(fd, struct.pack("<hhhhq", x, y, z, 0, stamp))
        finally:
            os.close(fd)

    def cleanup(self):
        """Disposes of the testbed; umockdev removes its directory (with the FIFOs in it)."""
        self.bed = None


def orientd(bed, *args, timeout=20, stdin=None):
    """Runs orientd to completion on the testbed; returns CompletedProcess (text)."""
    return subprocess.run([ORIENTD, *args], env=bed.env(), capture_output=True, text=True, timeout=timeout, input=stdin)


def own_state_directory(env):
    """`env` with a fresh $STATE_DIRECTORY unless it names one: a daemon under test keeps its rotation
    lock there (persist-lock), never in this machine's /var/lib/orientd, and no test inherits
    another's lock."""
    if "STATE_DIRECTORY" in env:
        return env
    return dict(env, STATE_DIRECTORY=tempfile.mkdtemp(prefix="orientd-state-"))


class Running:
    """orientd running in the background; its stdout and stderr lines are collected as they come."""

    def __init__(self, bed, *args, env=None, executable=ORIENTD, pass_fds=(), stdin=None):
        self.process = subprocess.Popen([executable, *args], env=own_state_directory(env or bed.env()), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, pass_fds=pass_fds, stdin=stdin)
        self.stdout_lines = []
        self.stderr_lines = []
        # Raw descriptors and our own line splitting: select() and a buffered readline() together
        # would leave lines stranded in Python's buffer.
        self._partial = {self.process.stdout.fileno(): b"", self.process.stderr.fileno(): b""}

    def _pump(self, timeout):
        descriptors = [fd for fd in self._partial if fd is not None]
        ready, _, _ = select.select(descriptors, [], [], timeout)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                continue
            data = self._partial[fd] + chunk
            *lines, self._partial[fd] = data.split(b"\n")
            target = self.stdout_lines if fd == self.process.stdout.fileno() else self.stderr_lines
            target.extend(line.decode(errors="replace") for line in lines)
        return any(os.fstat(fd) for fd in ready)

    def wait_for(self, predicate, timeout=10, what="condition"):
        """Reads output until predicate(self) holds; fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}\nstdout: {self.stdout_lines[-10:]}\nstderr: {self.stderr_lines[-20:]}")
            if not self._pump(min(remaining, 0.5)) and self.process.poll() is not None:
                while self._pump(0):
                    pass
                if not predicate(self):
                    raise AssertionError(f"orientd exited ({self.process.returncode}) before {what}\nstderr: {self.stderr_lines[-20:]}")
        return True

    def stderr_contains(self, text):
        return any(text in line for line in self.stderr_lines)

    def samples(self):
        """The CSV samples printed so far (record output), as (t, x, y, z)."""
        return [tuple(map(float, line.split(","))) for line in self.stdout_lines if line and line[0] in "-0123456789"]

    def stop(self, sig=15, timeout=10):
        if self.process.poll() is None:
            self.process.send_signal(sig)
        out_fd, err_fd = self.process.stdout.fileno(), self.process.stderr.fileno()
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            raise AssertionError("orientd did not stop on SIGTERM")
        for fd, rest, target in ((out_fd, out, self.stdout_lines), (err_fd, err, self.stderr_lines)):
            text = (self._partial.get(fd, b"") + rest).decode(errors="replace")
            target.extend(line for line in text.split("\n") if line)
        assert_in_words(self.stderr_lines)
        return self.process.returncode


class TestbedCase(unittest.TestCase):
    def setUp(self):
        self.bed = Testbed()
        self.addCleanup(self.bed.cleanup)
        self.running = []

    def tearDown(self):
        result = self._outcome.result  # the test's own failure is recorded there before tearDown
        failed = any(test is self for test, _ in result.errors + result.failures)
        for process in self.running:
            if process.process.poll() is None:
                process.process.kill()
                out, err = process.process.communicate()
                process.stderr_lines += err.decode(errors="replace").splitlines()
            if failed:  # what orientd said, for a failure that shows only a timeout
                print(f"\n--- {' '.join(process.process.args[:2])}: its last standard error lines", file=sys.stderr)
                print("\n".join(process.stderr_lines[-40:]), file=sys.stderr)

    def start(self, *args, env=None, pass_fds=(), stdin=None):
        process = Running(self.bed, *args, env=env, pass_fds=pass_fds, stdin=stdin)
        self.running.append(process)
        return process

    def list_sensors(self, *args):
        result = orientd(self.bed, "list-sensors", "--json", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)
