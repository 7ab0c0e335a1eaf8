"""What the checks of `make vm-test` share, inside the booted VM (as root, with the package installed):
the HID sensor hub played through /dev/uhid (hub/hid-sensor-hub.c), a protocol-v1 client of orientd's
socket, `monitor-sensor` (iio-sensor-proxy's D-Bus client) as a claimant, the journal, and the sysfs
of the IIO devices the kernel's own hid-sensor-* drivers made. Nothing under /sys is faked here."""
import glob
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

TESTS = os.environ.get("ORIENTD_VM_TESTS", os.path.dirname(os.path.abspath(__file__)))
HUB_BINARY = os.path.join(TESTS, "hub", "hid-sensor-hub")
SOCKET = "/run/orientd/orientd.sock"
# iio-sensor-proxy 3.0, the incumbent: the orientd package Conflicts with it, so apt removes it; the
# VM's root keeps its binaries and udev rule here (scripts/vm/vm-root).
INCUMBENT = "/opt/incumbent"
MONITOR_SENSOR = os.path.join(INCUMBENT, "monitor-sensor")
G = 9.80665
POSES = {"portrait": (0, -G, 0), "portraitUpsideDown": (0, G, 0), "landscapeLeft": (-G, 0, 0),
         "landscapeRight": (G, 0, 0), "faceUp": (0, 0, -G), "faceDown": (0, 0, G)}
IIO = "/sys/bus/iio/devices"


class CheckFailed(Exception):
    pass


def say(text):
    """A line of the check's progress (stdout: shown on the host as it comes)."""
    print(text, flush=True)


def fail(text):
    raise CheckFailed(text)


def run_check(body):
    """Runs body(); a CheckFailed or any other exception fails the check with one stderr line."""
    began = journal_cursor()
    try:
        detail = body()
    except CheckFailed as failure:
        show_journal(began)
        print(f"FAIL: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception as error:  # noqa: BLE001 – a broken check is a failed check, said in one line
        import traceback
        traceback.print_exc()
        show_journal(began)
        print(f"FAIL: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        sys.exit(2)
    if detail:
        print(detail, file=sys.stderr, flush=True)
    sys.exit(0)


def show_journal(cursor, lines=40):
    """orientd's journal since the check began, for the host's log of a failed check."""
    argv = ["journalctl", "--no-pager", "-o", "short-monotonic", "-u", "orientd.service", "-n", str(lines)]
    if cursor:
        argv += ["--after-cursor", cursor]
    print("orientd's journal during the check:\n" + subprocess.run(argv, capture_output=True, text=True).stdout,
          flush=True)


def wait_until(predicate, what, timeout=20, interval=0.05):
    """Returns predicate()'s first true value; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            fail(f"{what}: not within {timeout} s")
        time.sleep(interval)


def sh(*argv, check=True, timeout=120, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        fail(f"{' '.join(argv)} exited {result.returncode}: {(result.stderr or result.stdout).strip()[-300:]}")
    return result


# MARK: - The hub

class Hub:
    """hid-sensor-hub in the background, driven through its control FIFO; its status file counts the
    input reports each sensor sent."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="hub-")
        self.control_path = os.path.join(self.directory, "control")
        self.status_path = os.path.join(self.directory, "status")
        self.log_path = os.path.join(self.directory, "hub.log")
        os.mkfifo(self.control_path)
        if not os.access(HUB_BINARY, os.X_OK):
            fail(f"{HUB_BINARY} is not built (scripts/vm/vm-test builds it on the host)")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([HUB_BINARY, "--control", self.control_path, "--status", self.status_path],
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        # Opening a FIFO for writing waits for its reader: the hub, once it runs.
        self.control = open(self.control_path, "w", buffering=1)
        self.hubs = {}

    def send(self, line):
        if self.process.poll() is not None:
            fail(f"hid-sensor-hub exited ({self.process.returncode}): {self.log_tail()}")
        self.control.write(line + "\n")
        self.control.flush()

    def log_tail(self, lines=8):
        try:
            return " | ".join(open(self.log_path).read().splitlines()[-lines:])
        except OSError:
            return ""

    def create(self, name="hub0", sensors=("accel", "gyro", "als", "compass", "prox")):
        """A hub with these sensors; returns once the kernel made an IIO device for each."""
        before = iio_devices()
        self.send(f"create {name} {' '.join(sensors)}")
        names = {"accel": "accel_3d", "gyro": "gyro_3d", "als": "als", "compass": "magn_3d", "prox": "prox"}
        wanted = sorted(names[sensor] for sensor in sensors)

        def made():
            found = {path: name for path, name in iio_devices().items() if path not in before}
            return found if sorted(found.values()) == wanted else None
        made_devices = wait_until(made, f"the kernel's IIO devices for {name} ({', '.join(wanted)})", timeout=30)
        sh("udevadm", "settle", "--timeout=30")
        self.hubs[name] = made_devices
        say(f"hub {name}: " + ", ".join(f"{os.path.basename(p)} ({n})" for p, n in sorted(made_devices.items())))
        return made_devices

    def destroy(self, name="hub0"):
        devices = self.hubs.pop(name, {})
        self.send(f"destroy {name}")
        wait_until(lambda: not any(os.path.exists(path) for path in devices), f"{name}'s IIO devices removed", 30)
        sh("udevadm", "settle", "--timeout=30")

    def pose(self, name):
        self.accel(*POSES[name])

    def accel(self, x, y, z):
        self.send(f"accel {x:.5f} {y:.5f} {z:.5f}")

    def status(self):
        """{(hub, sensor): {key: value}} from the status file, and its time (CLOCK_MONOTONIC)."""
        self.send("status")
        sensors, stamp = {}, None
        for line in open(self.status_path).read().splitlines():
            kind, _, rest = line.partition(" ")
            fields = dict(item.split("=", 1) for item in rest.split() if "=" in item)
            if kind == "status":
                stamp = float(fields.get("time", "nan"))
            elif kind == "sensor":
                sensors[(fields.get("hub"), fields.get("type"))] = fields
        return stamp, sensors

    def reports(self, sensor="accel", hub="hub0"):
        """Input reports the sensor has sent, as the status file says now."""
        _, sensors = self.status()
        return int(sensors.get((hub, sensor), {}).get("reports", "0"))

    def close(self):
        try:
            self.send("quit")
            self.process.wait(timeout=30)
        except (CheckFailed, subprocess.TimeoutExpired, BrokenPipeError):
            self.process.kill()


def iio_devices():
    """{sysfs path: name} of the IIO devices now."""
    found = {}
    for path in glob.glob(os.path.join(IIO, "iio:device*")):
        try:
            found[os.path.realpath(path)] = open(os.path.join(path, "name")).read().strip()
        except OSError:
            pass
    return found


def device_of(name):
    """The sysfs path of the IIO device named `name` (accel_3d, gyro_3d…)."""
    paths = [path for path, found in iio_devices().items() if found == name]
    if len(paths) != 1:
        fail(f"expected one IIO device named {name}, found {paths}")
    return paths[0]


def attribute(path, name):
    with open(os.path.join(path, name)) as file:
        return file.read().strip()


# MARK: - orientd

def service(*properties):
    """systemctl show orientd.service's properties as a dict."""
    out = sh("systemctl", "show", "orientd.service", "-p", ",".join(properties)).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def wait_for_socket(timeout=30):
    wait_until(lambda: service("ActiveState")["ActiveState"] == "active" and os.path.exists(SOCKET),
               "orientd.service active with its socket", timeout)


def journal(since_cursor=None, unit="orientd.service"):
    """The unit's journal lines (since a cursor, when given)."""
    argv = ["journalctl", "-u", unit, "-o", "cat", "--no-pager"]
    if since_cursor:
        argv += ["--after-cursor", since_cursor]
    return sh(*argv, check=False).stdout.splitlines()


def journal_cursor():
    out = sh("journalctl", "-n", "0", "--show-cursor", "--no-pager", check=False).stdout
    for line in out.splitlines():
        if line.startswith("-- cursor: "):
            return line[len("-- cursor: "):]
    return None


def wakeups_per_second(pid, seconds, every=0.1):
    """Wake-ups a second of every thread of `pid` over `seconds`: their context switches (voluntary
    and not), read every `every` seconds and added up thread by thread, so that a thread that starts
    in the window counts from its start and one that ends loses at most `every` of its count."""
    def counts():
        found = {}
        for status in glob.glob(f"/proc/{pid}/task/*/status"):
            try:
                found[status.split("/")[4]] = sum(int(line.split()[1]) for line in open(status)
                                                  if line.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")))
            except (OSError, ValueError, IndexError):
                pass
        return found
    total, last, began = 0, counts(), time.monotonic()
    while time.monotonic() - began < seconds:
        time.sleep(every)
        now = counts()
        total += sum(count - last.get(tid, 0) for tid, count in now.items())
        last = now
    return total / (time.monotonic() - began)


class Client:
    """A protocol-v1 client of orientd's socket: one JSON object per line each way."""

    def __init__(self, path=SOCKET):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.events = []
        self.next_id = 1
        self.hello = self.receive()

    def receive(self, timeout=10):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                fail(f"orientd's socket said nothing within {timeout} s")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("orientd closed the socket")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        message["_received"] = time.monotonic()
        return message

    def request(self, op, **fields):
        request_id = self.next_id
        self.next_id += 1
        self.sock.sendall((json.dumps({"id": request_id, "op": op, **fields}) + "\n").encode())
        while True:
            message = self.receive()
            if message.get("type") == "reply" and message.get("id") == request_id:
                if not message.get("ok"):
                    fail(f"orientd refused {op}: {message}")
                return message
            self.events.append(message)

    def next_event(self, predicate=lambda e: True, timeout=10, what="an event"):
        deadline = time.monotonic() + timeout
        while True:
            while self.events:
                event = self.events.pop(0)
                if predicate(event):
                    return event
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                fail(f"no {what} on the socket within {timeout} s")
            message = self.receive(timeout=remaining)
            if message.get("type") == "event":
                self.events.append(message)

    def close(self):
        self.sock.close()


class MonitorSensor:
    """iio-sensor-proxy's `monitor-sensor`: claims the accelerometer, light and proximity (and the
    compass) over D-Bus as desktops do, and prints what it hears, one line each, timed here."""

    def __init__(self, *args):
        self.process = subprocess.Popen([MONITOR_SENSOR, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        self.started = time.monotonic()
        self.lines = []  # (time, text)
        self.partial = b""

    def read(self, timeout):
        ready, _, _ = select.select([self.process.stdout], [], [], max(0, timeout))
        if not ready:
            return False
        chunk = os.read(self.process.stdout.fileno(), 65536)
        if not chunk:
            fail(f"monitor-sensor exited: {[text for _, text in self.lines[-5:]]}")
        now = time.monotonic()
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        self.lines += [(now, line.decode(errors="replace").strip()) for line in lines]
        return True

    def wait_for(self, text, timeout=10, after=None):
        """The time of the first line containing `text` (at or after `after`, a time.monotonic())."""
        deadline = time.monotonic() + timeout
        while True:
            for stamp, line in self.lines:
                if text in line and (after is None or stamp >= after):
                    return stamp
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                fail(f"monitor-sensor did not print {text!r} within {timeout} s; it printed "
                     f"{[line for _, line in self.lines[-6:]]}")
            self.read(remaining)

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


class Incumbent:
    """iio-sensor-proxy run by hand as root (its package is gone), with its udev rule put back in
    /run for as long as it runs: it finds sensors by the properties the rule sets."""

    RULE = "/run/udev/rules.d/80-iio-sensor-proxy.rules"

    def __init__(self):
        os.makedirs(os.path.dirname(self.RULE), exist_ok=True)
        with open(os.path.join(INCUMBENT, "80-iio-sensor-proxy.rules")) as source, open(self.RULE, "w") as rule:
            rule.write(source.read())
        sh("udevadm", "control", "--reload")
        sh("udevadm", "trigger", "--subsystem-match=iio", "--action=change")
        sh("udevadm", "settle", "--timeout=30")
        self.log = open(tempfile.mktemp(suffix=".log"), "w")
        self.process = subprocess.Popen([os.path.join(INCUMBENT, "iio-sensor-proxy")], stdout=self.log,
                                        stderr=self.log, stdin=subprocess.DEVNULL)
        self.pid = str(self.process.pid)

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        os.remove(self.RULE)
        sh("udevadm", "control", "--reload")
