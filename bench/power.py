"""Power (issue 29): orientd's adaptive pacing against its fixed rate and iio-sensor-proxy, measured
in one run on the same simulated device under umockdev. Writes its section of docs/benchmarks.md
(marker power-benchmark); `python3 -m bench power` runs this section alone, `make bench`
runs it after the others.

1. Rest: every mode at once, each on a testbed (and private system bus) of its own, one client
   claiming the accelerometer, the device resting for REST seconds with sensor noise: context
   switches of every thread, reads of the attribute (inotify), CPU time.
   1b. The same in a hand (the device sways): what the held rate costs.
2. Step reaction: portrait <-> landscape steps written into sysfs, the time until the client has
   the change; today's pauses (0.2-0.6 s) and pauses after which the device rests.
3. The public corpus played into sysfs in real time, the changes the client sees scored with
   Tests/Fixtures/corpus/score.py.
   3b. The corpus's twins (public-gyro) played into an IMU the same way, for the default mode: issue
   50's targets in real time.
4. The trade-off over rest rates (1.5, 1.8, 4 Hz, fixed), each with the held rate (4 Hz).

Each measurement of 2 and 3 runs in a process of its own (`python3 -m bench.power steps MODE`,
`python3 -m bench.power play TRACE MODE [FOLDER]`, under umockdev-wrapper), so the modes play side by side without sharing an
interpreter. Run under umockdev-wrapper, as every section is.

`python3 -m bench.power realtime` plays only §3 for the default mode (socket), POWER_ROUNDS times, and
prints its pooled score as one JSON line (taken back included, and each trace's mean error time and
start-up: error_by_trace, startup_by_trace); with ORIENTD set to another build it measures that
build on the same traces (issue 48's before and after)."""
import json
import math
import os
import random
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import (
    ROOT, CORPUS, ORIENTD, IN_ACCESS, percentile, log, thread_names, load, cost_since, machine, peer_version, mark,
    write_section, real_path, AccessLog, Claimant,
)
from sensorproxy import PrivateSystemBus  # noqa: E402 (bench.common put Tests/integration on the path)
from testbed import Testbed, motion_event  # noqa: E402
from gi.repository import GLib  # noqa: E402 (testbed and sensorproxy choose the versions)

# The corpus played (POWER_CORPUS: another folder of it, such as public-gyro, whose traces carry a
# gyroscope's rates: the simulated device is then an IMU and its in_anglvel attributes are written too).
PUBLIC = os.path.join(CORPUS, os.environ.get("POWER_CORPUS", "public"))
# The corpus's twins (issue 50): the same traces with a gyroscope's rates, played into an IMU in §3b.
TWINS = os.path.join(CORPUS, "public-gyro")
GYRO_SCALE = 0.0001  # rad/s per count in in_anglvel_scale
SCALE = 0.00981  # m/s² per count in in_accel_scale: 1000 counts per g
REST = int(os.environ.get("POWER_REST", "60"))  # seconds of rest measured (POWER_REST: shorter, to try the bench)
WARM_UP = 5  # seconds after the claim before the rest is measured (the device settles, the pace slows)
NOISE_COUNTS = 2  # at rest each axis reads its value ± up to this many counts …
NOISE_PERIOD = 0.04  # … drawn afresh this often (a 25 Hz output data rate)
RATE = 25  # Hz: orientd's sampling rate while the device moves (`--rate`)
DEFAULT = 1.8  # orientd's default rest rate, lying still (SamplingPace.Settings)
HELD = 4  # orientd's default held rate: at rest, swaying in a hand (SamplingPace.Settings)
RATES = (1.5, DEFAULT, 4, 0)  # orientd's rest rates in the trade-off; 0: fixed rate (adaptive pacing off)
HELD_OFF = "held0"  # the mode before issue 38: 1.9 Hz at every rest, held or lying (`--rest-rate 1.9 --held-rate 0`)
BEFORE_38 = 1.9
SWAY_COUNTS = 17  # in a hand (§1b) the screen tilts by up to 1° (17 counts on z) …
SWAY_HZ = 0.3  # … back and forth at this rate, a hand's slow sway
INTERRUPT = "irq"  # the mode whose simulated sensor has a motion interrupt (orientd rests on it)
IMU = "imu"  # the mode whose simulated sensor is an IMU: a gyroscope in the same device (issue 50), off at rest
INTERRUPT_THRESHOLD = 50  # counts (0.05 g): the simulated interrupt's threshold against its reference …
INTERRUPT_FOLLOW = 0.1  # … which follows the readings by this share per write (a high-pass filter of about 0.4 s)
STEPS = int(os.environ.get("POWER_STEPS", "50"))  # per protocol and mode (POWER_STEPS: fewer, to try the bench)
CONTROL = ("clean_rotations", "mounted_rotated", "fast_flick", "face_up_down")  # played again alone
PORTRAIT, LANDSCAPE = (0, -1000, 0), (-1000, 0, 0)  # counts; LANDSCAPE is landscapeLeft (right-up)


# ---------------------------------------------------------------- the modes

def mode_key(server, rest_rate=None, front="dbus"):
    return server if server == "iio-sensor-proxy" else f"orientd:{rest_rate}:{front}"


def parse_mode(key):
    if key == "iio-sensor-proxy":
        return dict(server=key, rest_rate=None, front="dbus")
    _, rate, front = key.split(":")
    if rate in (INTERRUPT, HELD_OFF, IMU):
        return dict(server="orientd", rest_rate=rate, front=front)
    return dict(server="orientd", rest_rate=float(rate) if "." in rate else int(rate), front=front)


def label(key):
    m = parse_mode(key)
    if m["server"] == "iio-sensor-proxy":
        return "iio-sensor-proxy 3.0, D-Bus"
    if m["rest_rate"] == INTERRUPT:
        return "orientd adaptive, motion interrupt, " + ("D-Bus" if m["front"] == "dbus" else "socket")
    if m["rest_rate"] == IMU:
        return "orientd adaptive (default), an IMU (its gyroscope in the same device), " + (
            "D-Bus" if m["front"] == "dbus" else "socket")
    if m["rest_rate"] == HELD_OFF:
        return f"orientd adaptive, rest {BEFORE_38} Hz held or lying (`--rest-rate {BEFORE_38} --held-rate 0`, before issue 38), " + (
            "D-Bus" if m["front"] == "dbus" else "socket")
    rate = m["rest_rate"]
    pace = "fixed 25 Hz (`--rest-rate 0`)" if rate == 0 else f"adaptive, rest {rate} Hz lying, {max(HELD, rate)} Hz held"
    if rate == DEFAULT:
        pace += " (default)"
    return f"orientd {pace}, " + ("D-Bus" if m["front"] == "dbus" else "socket")


def orientd_args(rest_rate, socket_path, dbus):
    return [ORIENTD, "serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "on" if dbus else "off",
            "--no-dbus-polkit", "--acquisition", "poll", "--rate", str(RATE),
            "--rest-rate", str(DEFAULT if rest_rate in (INTERRUPT, IMU) else BEFORE_38 if rest_rate == HELD_OFF else rest_rate)] + (
                ["--held-rate", "0"] if rest_rate == HELD_OFF else [])


# ---------------------------------------------------------------- one daemon, its device and its client

class SocketClient:
    """A protocol-v1 client on orientd's socket; device events are timestamped (CLOCK_MONOTONIC)
    as its reader thread receives them."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.changes, self.replies = [], {}
        self.condition = threading.Condition()
        self.next_id = 1
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        buffer = b""
        while not self.stopping:
            if not select.select([self.sock], [], [], 0.2)[0]:
                continue
            chunk = self.sock.recv(1 << 16)
            when = time.monotonic()
            if not chunk:
                return
            *lines, buffer = (buffer + chunk).split(b"\n")
            with self.condition:
                for line in lines:
                    message = json.loads(line)
                    if message.get("type") == "event" and message.get("topic") == "device":
                        self.changes.append((when, message["to"]))
                    elif message.get("type") == "reply":
                        self.replies[message.get("id")] = message
                self.condition.notify_all()

    def send(self, op, **fields):
        with self.condition:
            request_id = self.next_id
            self.next_id += 1
        self.sock.sendall((json.dumps({"id": request_id, "op": op, **fields}) + "\n").encode())
        return request_id

    def request(self, op, timeout=10, **fields):
        request_id = self.send(op, **fields)
        with self.condition:
            if not self.condition.wait_for(lambda: request_id in self.replies, timeout):
                raise RuntimeError(f"no reply to {op}")
            return self.replies.pop(request_id)

    def claim(self):
        self.send("subscribe", topics=["device"])

    def close(self):
        self.stopping = True
        self.thread.join()
        self.sock.close()


class DBusClient(Claimant):
    """bench.common's Claimant, the AccelerometerOrientation changes kept as (time, name)."""

    @property
    def orientations(self):
        with self.condition:
            return [(when, changed["AccelerometerOrientation"]) for when, changed in self.changes if "AccelerometerOrientation" in changed]

    def claim(self):
        # iio-sensor-proxy 3.0 answers at once; orientd once it has an orientation, so on a thread.
        threading.Thread(target=lambda: self.call("ClaimAccelerometer"), daemon=True).start()


class Device:
    """The simulated accelerometer (iio:device0, 1000 counts per g, no sampling_frequency, so each
    daemon polls at its own rate) with the udev properties a device has: iio-sensor-proxy's type
    (its udev rule would set it; umockdev runs no rules) and systemd's hwdb mount matrix. The raw
    attributes are kept open and written in place, as the kernel changes them."""

    def __init__(self, raw=PORTRAIT, mount_matrix="1, 0, 0; 0, 1, 0; 0, 0, 1", interrupt=False, gyroscope=False):
        self.bed = Testbed()
        attributes = {f"events/in_accel_{axis}_mag_rising_en": "0" for axis in "xyz"} if interrupt else {}
        if gyroscope:  # an IMU: its gyroscope in the same device
            attributes.update({f"in_anglvel_{axis}_raw": "0" for axis in "xyz"}, in_anglvel_scale=f"{GYRO_SCALE}")
        self.path = self.bed.add_accelerometer(0, name="accel", raw=raw, scale=f"{SCALE}", sampling=None, attributes=attributes or None,
                                               properties={"IIO_SENSOR_PROXY_TYPE": "iio-poll-accel", "NAME": '"accel"',
                                                           "ACCEL_MOUNT_MATRIX": mount_matrix})
        self.files = [os.open(real_path(self.bed, self.path, f"in_accel_{axis}_raw"), os.O_WRONLY) for axis in "xyz"]
        self.gyro_files = [os.open(real_path(self.bed, self.path, f"in_anglvel_{axis}_raw"), os.O_WRONLY)
                           for axis in "xyz"] if gyroscope else []
        # A motion interrupt as mma8452's transient detection has it: an event when an axis departs
        # from a reference (the readings high-pass filtered) by more than the threshold.
        self.events = self.bed.add_motion_interrupt(0) if interrupt else None
        self.reference = [float(v) for v in raw]
        self.fired = 0

    @property
    def pass_fds(self):
        """The descriptor the daemon must inherit (the event descriptor the ioctl returns)."""
        return (self.events[0],) if self.events else ()

    def write(self, counts, rate_counts=None):
        for fd, value in zip(self.files + (self.gyro_files if rate_counts else []), list(counts) + list(rate_counts or [])):
            text = b"%d\n" % value
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
        if self.events:
            if any(abs(value - ref) > INTERRUPT_THRESHOLD for value, ref in zip(counts, self.reference)):
                os.write(self.events[1], motion_event())
                self.fired += 1
                self.reference = [float(v) for v in counts]
            else:
                self.reference = [ref + INTERRUPT_FOLLOW * (value - ref) for value, ref in zip(counts, self.reference)]

    def close(self):
        for fd in self.files + self.gyro_files + list(self.events or ()):
            os.close(fd)
        self.bed.cleanup()


class Served:
    """One mode: its daemon serving the Device, and a client (not claiming yet). `log_path`: the
    daemon's log at debug level (its pace changes), else warnings to nowhere."""

    def __init__(self, key, device, log_path=None):
        self.key, self.mode, self.device = key, parse_mode(key), device
        self.directory = tempfile.mkdtemp(prefix="bench-power-")
        dbus = self.mode["front"] == "dbus"
        self.bus = PrivateSystemBus() if dbus else None
        env = self.bus.env(device.bed.env()) if dbus else device.bed.env()
        if self.mode["server"] == "iio-sensor-proxy":
            args = ["/usr/sbin/iio-sensor-proxy"]
        else:
            args = orientd_args(self.mode["rest_rate"], os.path.join(self.directory, "o.sock"), dbus)
            args += ["--log-level", "debug" if log_path else "warning"]
        self.log_path = log_path
        self.process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, pass_fds=device.pass_fds,
                                        stderr=open(log_path, "w") if log_path else subprocess.DEVNULL)
        self.socket = None
        if dbus:
            self.client = DBusClient(self.bus)
            self._wait(self._publishes_accelerometer, "publish the accelerometer")
        else:
            self.client = self.socket = SocketClient(os.path.join(self.directory, "o.sock"))
            # Served once `get` names the sensor, as the D-Bus mode waits for HasAccelerometer: the
            # socket listens while the daemon still starts (its first reply took 12-19 ms here), and
            # a claim in that time would count the daemon's own start in every trace's start-up.
            self._wait(lambda: self.socket.request("get")["state"].get("sensorName") is not None,
                       "serve the accelerometer")
        watched = {"accel": real_path(device.bed, device.path, "in_accel_x_raw")}
        if device.gyro_files:
            watched["gyro"] = real_path(device.bed, device.path, "in_anglvel_x_raw")
        self.reads = AccessLog(watched)

    def _wait(self, served, what):
        """Asks `served()` every 50 ms until it is true; fails after 10 s, or when the daemon exits."""
        deadline = time.monotonic() + 10
        while not served():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"{self.key} did not {what}")
            time.sleep(0.05)

    def _publishes_accelerometer(self):
        try:
            return bool(self.client.get("HasAccelerometer"))
        except GLib.Error:
            return False  # not on the bus yet

    def changes(self):
        """(time, name) of every orientation change the client saw: orientd's device orientations
        on the socket, AccelerometerOrientation on D-Bus."""
        return list(self.client.changes) if self.socket else self.client.orientations

    def rate(self):
        """The rate in force (orientd on the socket: `get`), else None."""
        return self.socket.request("get")["state"].get("rate") if self.socket else None

    def pace_changes(self):
        if not self.log_path:
            return None
        text = open(self.log_path).read()
        return dict(rest=text.count("the device rests"), moves=text.count("the device moves"))

    def stop(self):
        self.reads.close()
        self.client.close()
        self.process.kill()
        self.process.wait()
        if self.bus:
            self.bus.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


# ---------------------------------------------------------------- 1. rest

class Noise:
    """Sensor noise: every NOISE_PERIOD each axis of each device reads its pose's value plus a whole
    number of counts drawn uniformly from ±NOISE_COUNTS (±0.002 g), as a sensor's quantised noise.
    Written by this process; the daemons only read it. `set` changes a device's pose at once (a
    step), and the noise goes on around the new pose. `sway`: the device is held in a hand, and z
    also swings by up to SWAY_COUNTS at SWAY_HZ (1° of tilt), far inside the motion margin."""

    def __init__(self, devices, raw=PORTRAIT, seed=29, sway=False):
        self.devices, self.poses = devices, [raw] * len(devices)
        self.sway, self.started = sway, time.monotonic()
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _noisy(self, raw):
        if self.sway:
            swing = round(SWAY_COUNTS * math.sin(2 * math.pi * SWAY_HZ * (time.monotonic() - self.started)))
            raw = (raw[0], raw[1], raw[2] + swing)
        return [value + self.rng.randint(-NOISE_COUNTS, NOISE_COUNTS) for value in raw]

    def _run(self):
        due = time.monotonic()
        while not self.stopping:
            with self.lock:
                for device, raw in zip(self.devices, self.poses):
                    device.write(self._noisy(raw))
            due += NOISE_PERIOD
            time.sleep(max(0.0, due - time.monotonic()))

    def set(self, index, raw):
        """The device's new pose, written now; returns the time just before the write."""
        with self.lock:
            self.poses[index] = raw
            written = time.monotonic()
            self.devices[index].write(self._noisy(raw))
        return written

    def stop(self):
        self.stopping = True
        self.thread.join()


def switches(pid):
    """(voluntary, involuntary) context switches per thread id, with the thread's name."""
    out = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/task/{task}/status"))
        except OSError:
            continue
        out[task] = (fields["Name"].strip(), int(fields["voluntary_ctxt_switches"]), int(fields["nonvoluntary_ctxt_switches"]))
    return out


def switches_since(before, after, seconds):
    """Per thread name, (voluntary, involuntary) switches per second between two switches()
    (a thread started meanwhile counts with all of its own)."""
    out = {}
    for task, (name, voluntary, involuntary) in after.items():
        _, v0, i0 = before.get(task, (name, 0, 0))
        v, i = out.get(name, (0.0, 0.0))
        out[name] = (v + (voluntary - v0) / seconds, i + (involuntary - i0) / seconds)
    return out


def rest(keys, seconds=REST, sway=False):
    """Every mode at once, one claimant each, the device resting with noise (lying on a table, or
    `sway`: held in a hand): per mode the wake-ups (context switches of all threads, by thread),
    reads of in_accel_x_raw and CPU time over `seconds`, and the rate in force at the end (orientd
    on the socket)."""
    devices, runs = [], {}
    noise = None
    try:
        for key in keys:
            device = Device(interrupt=parse_mode(key)["rest_rate"] == INTERRUPT, gyroscope=parse_mode(key)["rest_rate"] == IMU)
            devices.append(device)
            runs[key] = Served(key, device)
        noise = Noise(devices, sway=sway)
        for run in runs.values():
            run.client.claim()
        time.sleep(WARM_UP)
        marks, before, split = {}, {}, {}
        for key, run in runs.items():
            marks[key], before[key], split[key] = run.reads.mark(), load(run.process.pid), switches(run.process.pid)
        time.sleep(seconds)
        out = {}
        for key, run in runs.items():
            out[key] = cost_since(run.process.pid, before[key])
            elapsed = time.monotonic() - before[key]["wall"]
            out[key]["split"] = switches_since(split[key], switches(run.process.pid), elapsed)
            out[key]["reads"] = (run.reads.mark()["accel"] - marks[key]["accel"]) / elapsed
            if "gyro" in marks[key]:  # an IMU: its gyroscope's reads (none while the device rests)
                out[key]["gyro_reads"] = (run.reads.mark()["gyro"] - marks[key]["gyro"]) / elapsed
            out[key]["interval"] = run.reads.interval("accel", marks[key])
            out[key]["rate"] = run.rate()
            out[key]["threads"] = sorted(set(thread_names(run.process.pid).values()))
        return out
    finally:
        if noise:
            noise.stop()
        for run in runs.values():
            run.stop()
        for device in devices:
            device.close()


# ---------------------------------------------------------------- 2. step reaction

def step_series(key, seed):
    """In this process: the mode's daemon on a Device; STEPS steps after today's pauses (0.2-0.6 s,
    bench/comparison.py's end_to_end), then STEPS steps after pauses long enough to rest (1.5 s, plus up to
    2 s drawn uniformly, so the step falls at an all but uniformly random phase of the rest poll).
    Per protocol: the reactions (s), and for orientd on the socket the rate in force before each
    step."""
    sys.setswitchinterval(0.0005)  # the client's thread timestamps a change without waiting long for the noise
    rng = random.Random(seed)
    device = Device(interrupt=parse_mode(key)["rest_rate"] == INTERRUPT)
    run = Served(key, device)
    # Noise here too: a real sensor never holds an axis bit-identical, and orientd takes an axis
    # that reads the same for 30 s while the others move for a broken one (z is 0 in both poses).
    noise = Noise([device], seed=seed)
    names = {PORTRAIT: ("portrait", "normal"), LANDSCAPE: ("landscapeLeft", "right-up")}
    out = {}
    try:
        run.client.claim()
        wanted = names[PORTRAIT]
        deadline = time.monotonic() + 10
        while not any(name in wanted for _, name in run.changes()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{key}: no portrait after the claim")
            time.sleep(0.01)
        current = PORTRAIT
        for protocol, pause in (("today", lambda: rng.uniform(0.2, 0.6)), ("rest", lambda: 1.5 + rng.uniform(0, 2.0))):
            reactions, rates = [], []
            for _ in range(STEPS):
                time.sleep(pause())
                rates.append(run.rate())
                target = LANDSCAPE if current == PORTRAIT else PORTRAIT
                count = len(run.changes())
                written = noise.set(0, target)
                deadline = written + 5
                while True:
                    seen = [when for when, name in run.changes()[count:] if name in names[target]]
                    if seen:
                        reactions.append(seen[0] - written)
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{key} did not react to a step")
                    time.sleep(0.001)  # the change arrives on the client's thread; looked at every ms
                current = target
            out[protocol] = dict(reactions=reactions, rates=rates)
        return out
    finally:
        noise.stop()
        run.stop()
        device.close()


def run_job(*args):
    """`python3 -m bench.power ARGS…` in a process of its own under umockdev-wrapper; its one JSON line."""
    result = subprocess.run(["umockdev-wrapper", "/usr/bin/python3", "-m", "bench.power", *args], capture_output=True,
                            text=True, cwd=ROOT, env=dict(os.environ, ORIENTD=ORIENTD))
    if result.returncode != 0:
        raise RuntimeError(f"bench.power {' '.join(args)}: {result.stderr[-800:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def steps(keys):
    """Every mode's step series at once, each in its own process."""
    with ThreadPoolExecutor(max_workers=len(keys)) as pool:
        return dict(zip(keys, pool.map(lambda item: run_job("steps", item[1], str(40 + item[0])), enumerate(keys))))


# ---------------------------------------------------------------- 3. the corpus in real time

def trace_names(folder=PUBLIC):
    """The traces of a corpus folder (POWER_TRACES, comma-separated: some of them, to try the bench)."""
    chosen = os.environ.get("POWER_TRACES")
    return chosen.split(",") if chosen else sorted(f[:-len(".labels.json")] for f in os.listdir(folder) if f.endswith(".labels.json"))


def play(name, key, folder=PUBLIC):
    """In this process: trace `name` of `folder` written into the Device in real time (in the
    sensor's frame, its mount matrix as udev's ACCEL_MOUNT_MATRIX; an IMU when the trace has a
    gyroscope's rates), the claim at the trace's start; the changes the client saw (trace time,
    name), the reads of the attribute, how late the writes were, and orientd's pace changes."""
    meta = json.load(open(os.path.join(folder, f"{name}.meta.json")))
    samples = []
    with open(os.path.join(folder, f"{name}.csv")) as handle:
        for line in handle:
            if line[0] in "-0123456789":
                t, x, y, z, *rate = map(float, line.split(","))
                samples.append((t, tuple(int(round(v / SCALE)) for v in (x, y, z)),
                                tuple(int(round(v / GYRO_SCALE)) for v in rate) if rate else None))
    device = Device(raw=samples[0][1], mount_matrix=meta["mount_matrix_hwdb"], gyroscope=samples[0][2] is not None,
                    interrupt=key != "iio-sensor-proxy" and parse_mode(key)["rest_rate"] == INTERRUPT)
    log_path = os.path.join(tempfile.mkdtemp(prefix="bench-power-log-"), "orientd.log") if key.startswith("orientd") else None
    run = Served(key, device, log_path)
    try:
        sys.setswitchinterval(0.0005)  # the client's thread timestamps a change without waiting long for the writer
        reads_before = run.reads.mark()["accel"]
        # The trace's clock starts at its first sample, and the claim falls at a random moment of
        # the daemon's sampling period after it (25 Hz), as `orientd replay --seed` draws its first
        # read: a client's claim falls anywhere between a real sensor's samples, the wait counts in
        # the start-up, and the daemon's reads keep that phase to the samples instead of following
        # each write by a millisecond.
        start = time.monotonic() - samples[0][0]
        claim_at = samples[0][0] + random.uniform(0, 1 / RATE)

        def wait_until(trace_time):
            delay = start + trace_time - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # pacing the simulated sensor and the claim, not synchronisation

        lateness = []
        for t, counts, rate_counts in samples:
            if claim_at is not None and claim_at <= t:
                wait_until(claim_at)
                run.client.claim()
                claim_at = None
            wait_until(t)
            device.write(counts, rate_counts)
            lateness.append(time.monotonic() - (start + t))
        end = time.monotonic()
        reads = run.reads.mark()["accel"] - reads_before
        time.sleep(1.0)  # iio-sensor-proxy's next poll (700 ms), so the last change can be read
        return dict(events=[(round(when - start, 4), name) for when, name in run.changes()], reads=reads, seconds=end - start,
                    lateness=[percentile(lateness, 50), percentile(lateness, 99), max(lateness)], paces=run.pace_changes())
    finally:
        run.stop()
        device.close()
        if log_path:
            shutil.rmtree(os.path.dirname(log_path), ignore_errors=True)


def score(directory, names, *flags, folder=PUBLIC):
    """score.py over the traces `names` of `folder` played into a directory of NAME.events.jsonl (its
    --json): per trace its summary row and its transitions (start of the settled interval, latency or
    None if missed; startups left out), and the overall row."""
    details = os.path.join(directory, "score.json")
    pairs = [path for name in names for path in (os.path.join(directory, f"{name}.events.jsonl"), os.path.join(folder, f"{name}.labels.json"))]
    result = subprocess.run(["python3", os.path.join(CORPUS, "score.py"), *pairs, "--json", details, *flags],
                            capture_output=True, text=True, env=dict(os.environ, LD_PRELOAD=""))
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    data = json.load(open(details))
    rows = {row["scenario"]: row for row in data["summary"]}
    transitions = {name: [(x["at"], None if x["missed"] else x["latency"]) for x in r["transitions"] if not x["startup"]]
                   for name, r in data["details"].items()}
    return dict(rows=rows, transitions=transitions)


def pooled(scores):
    """score()s of several rounds as one: transitions, missed and false changes summed, latency
    median and p95 over every round's transitions (as score.py takes them over every trace's),
    startup the median over every round's traces, error time the mean; and the p95 of each round,
    and per trace the mean error time and start-up."""
    rows = [row for sc in scores for name, row in sc["rows"].items() if name != "OVERALL"]
    traces = [name for name in scores[0]["rows"] if name != "OVERALL"]

    def mean_of(name, key):
        values = [sc["rows"][name][key] for sc in scores if sc["rows"][name][key] is not None]
        return statistics.mean(values) if values else None

    latencies = [latency for sc in scores for trace in sc["transitions"].values() for _, latency in trace if latency is not None]
    startups = [row["startup"] for row in rows if row["startup"] is not None]
    return dict(transitions=sum(row["transitions"] for row in rows), missed=sum(row["missed"] for row in rows),
                false=sum(row["false_changes"] for row in rows), taken_back=sum(row["taken_back"] for row in rows),
                median=percentile(latencies, 50) if latencies else None, p95=percentile(latencies, 95) if latencies else None,
                startup=percentile(startups, 50) if startups else None,
                error=statistics.mean(sc["rows"]["OVERALL"]["error_pct"] for sc in scores),
                p95_by_round=[sc["rows"]["OVERALL"]["lat_p95"] for sc in scores],
                false_by_trace={name: sum(sc["rows"][name]["false_changes"] for sc in scores) for name in traces},
                back_by_trace={name: sum(sc["rows"][name]["taken_back"] for sc in scores) for name in traces},
                # Where the error time goes, to compare a real-time play with an offline or paced replay.
                error_by_trace={name: mean_of(name, "error_pct") for name in traces},
                startup_by_trace={name: mean_of(name, "startup") for name in traces})


def corpus(keys, names=None, rounds=1, together=True, folder=PUBLIC):
    """Every trace of `folder` for every mode, `rounds` times. `together`: the modes of one trace play
    at once (one process each), trace after trace; else one process at a time. Per mode and round
    score.py's results (seven states and upright only for orientd, --iio for iio-sensor-proxy); per
    mode the reads per second and pace changes while the corpus played, and how late the writes were."""
    names = names or trace_names(folder)
    root = tempfile.mkdtemp(prefix="bench-power-corpus-")
    plays = {key: [{} for _ in range(rounds)] for key in keys}
    for round_ in range(rounds):
        for name in names:
            jobs = [(name, key, folder) for key in keys]
            if together:
                with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                    outcomes = list(pool.map(lambda job: run_job("play", *job), jobs))
            else:
                outcomes = [run_job("play", *job) for job in jobs]
            for (_, key, _), outcome in zip(jobs, outcomes):
                plays[key][round_][name] = outcome
    out = {}
    for key in keys:
        out[key] = dict(all=[], upright=[])
        for round_, played in enumerate(plays[key]):
            directory = os.path.join(root, f"{key.replace(':', '_')}-{round_}")
            os.makedirs(directory)
            for name, outcome in played.items():
                with open(os.path.join(directory, f"{name}.events.jsonl"), "w") as handle:
                    for t, orientation in outcome["events"]:
                        handle.write(json.dumps({"t": t, "orientation": orientation}) + "\n")
            if key == "iio-sensor-proxy":
                out[key]["upright"].append(score(directory, names, "--iio", folder=folder))
            else:
                out[key]["all"].append(score(directory, names, folder=folder))
                out[key]["upright"].append(score(directory, names, "--upright-only", folder=folder))
        every = [p for played in plays[key] for p in played.values()]
        paces = [p["paces"] for p in every if p["paces"]]
        out[key].update(reads=sum(p["reads"] for p in every) / sum(p["seconds"] for p in every),
                        lateness=max(p["lateness"][1] for p in every), late_max=max(p["lateness"][2] for p in every),
                        rests=sum(p["rest"] for p in paces) if paces else None, moves=sum(p["moves"] for p in paces) if paces else None)
    shutil.rmtree(root, ignore_errors=True)
    return out


def paired(one, two, names):
    """Two plays' transitions on the traces `names`, paired by trace and labelled time: how many,
    the (median, p95) of each, and the median and largest difference of a pair."""
    pairs = [(a[1], b[1]) for name in names for a, b in zip(one["transitions"][name], two["transitions"][name])
             if a[1] is not None and b[1] is not None]
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    differences = [abs(a - b) for a, b in pairs]
    return dict(n=len(pairs), one=(percentile(first, 50), percentile(first, 95)), two=(percentile(second, 50), percentile(second, 95)),
                median_difference=percentile(differences, 50), max_difference=max(differences) if differences else None)


def control(played, key):
    """The mode `key` played again alone on the CONTROL traces, against its first round side by
    side; beside it its first and second rounds side by side (how much two plays differ anyway)."""
    alone = corpus([key], names=list(CONTROL), together=False)[key]["all"][0]
    rounds = played[key]["all"]
    return dict(alone=paired(rounds[0], alone, CONTROL), rounds=paired(rounds[0], rounds[1], CONTROL) if len(rounds) > 1 else None)


# ---------------------------------------------------------------- the section

RAW = os.path.join(tempfile.gettempdir(), "bench-power-measurements.json")
ROUNDS = int(os.environ.get("POWER_ROUNDS", "2"))  # plays of the corpus per mode


def commit():
    """The commit orientd was built from: $ORIENTD_COMMIT, else this tree's (with -dirty when it
    has changes, as make bench builds the tree)."""
    if os.environ.get("ORIENTD_COMMIT"):
        return os.environ["ORIENTD_COMMIT"]
    result = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--exclude", "*"], capture_output=True, text=True)
    return result.stdout.strip() or "?"


def cpu_times():
    """(busy, total) jiffies of all the machine's cores (/proc/stat)."""
    fields = [int(value) for value in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def measure():
    """Every part; the raw figures are kept in RAW after each (`power.py rewrite` writes the section
    from them again)."""
    peer = "iio-sensor-proxy"
    m = dict(timings={}, commit=commit(), date=time.strftime("%Y-%m-%d"), machine=machine(), peer_version=peer_version())
    started = time.monotonic()

    def part(name, what, function, *args):
        log(f"power: {what} …")
        t, (busy, total) = time.monotonic(), cpu_times()
        m[name] = function(*args)
        m["timings"][name] = time.monotonic() - t
        busy2, total2 = cpu_times()
        m.setdefault("busy", {})[name] = (busy2 - busy) / max(total2 - total, 1)  # everything, this benchmark included
        m["seconds"] = time.monotonic() - started
        with open(RAW, "w") as handle:
            json.dump(m, handle, default=str)

    part("rest", f"every mode at rest, claimed, {REST} s", rest,
         [mode_key("orientd", rate) for rate in RATES] + [mode_key("orientd", INTERRUPT), mode_key("orientd", IMU),
                                                          mode_key("orientd", DEFAULT, "socket"),
                                                          mode_key("orientd", HELD_OFF, "socket"), peer])
    part("hand", f"at rest in a hand, claimed, {REST // 2} s", rest,
         [mode_key("orientd", DEFAULT), mode_key("orientd", IMU), mode_key("orientd", DEFAULT, "socket"),
          mode_key("orientd", HELD_OFF, "socket"), peer],
         REST // 2, True)
    step_keys = [mode_key("orientd", rate, "socket") for rate in RATES] + [mode_key("orientd", INTERRUPT, "socket"), mode_key("orientd", DEFAULT), peer]
    part("steps", f"step reaction, {len(step_keys)} modes side by side, {2 * STEPS} steps each", steps, step_keys)
    corpus_keys = ([mode_key("orientd", rate, "socket") for rate in RATES]
                   + [mode_key("orientd", HELD_OFF, "socket"), mode_key("orientd", INTERRUPT, "socket"), peer])
    part("corpus", f"the public corpus in real time, {len(corpus_keys)} modes side by side, trace after trace, {ROUNDS} rounds",
         corpus, corpus_keys, None, ROUNDS)
    fixed = mode_key("orientd", 0, "socket")
    part("control", f"the control, {len(CONTROL)} traces again for the fixed rate alone", lambda: control(m["corpus"], fixed))
    part("twins", f"the corpus's twins in real time (an IMU), the default mode alone, trace after trace, {ROUNDS} rounds",
         corpus, [mode_key("orientd", DEFAULT, "socket")], None, ROUNDS, True, TWINS)
    log(f"power: raw figures in {RAW}")
    return m


def s(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f} s"


def ms(seconds):
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


def ratio(a, b):
    return f"{a / b:.2f}×" if b else "–"


def mark(ok):
    return "met" if ok else "**missed**"


def short(key):
    m = parse_mode(key)
    if m["server"] == "iio-sensor-proxy":
        return "iio-sensor-proxy"
    if m["rest_rate"] == HELD_OFF:
        return f"{BEFORE_38} Hz held or lying"
    if m["rest_rate"] == IMU:
        return "IMU"
    return "fixed" if m["rest_rate"] == 0 else "interrupt" if m["rest_rate"] == INTERRUPT else f"{m['rest_rate']} Hz"


def section(m):
    resting, stepped, played, checked = m["rest"], m["steps"], m["corpus"], m["control"]
    hand = m.get("hand")
    before_38 = mode_key("orientd", HELD_OFF, "socket")
    peer = "iio-sensor-proxy"
    adaptive, fixed = mode_key("orientd", DEFAULT), mode_key("orientd", 0)
    adaptive_socket, fixed_socket = mode_key("orientd", DEFAULT, "socket"), mode_key("orientd", 0, "socket")
    rounds = len(played[peer]["upright"])
    t = m["timings"]
    lines = ["<!-- power-benchmark:begin -->", "",
             f"Measured {m['date']} on {m['machine']}; iio-sensor-proxy {m['peer_version']} (Debian), orientd release build of "
             f"{m['commit']}. This section took {m['seconds']:.0f} s (rest {t['rest']:.0f} s, "
             + (f"in a hand {t['hand']:.0f} s, " if hand else "") + f"steps {t['steps']:.0f} s, "
             f"corpus {t['corpus']:.0f} s, control {t['control']:.0f} s" + (f", twins {t['twins']:.0f} s" if "twins" in t else "")
             + "); the machine's cores were busy "
             + ", ".join(f"{100 * share:.0f} %" for share in m["busy"].values()) + " of the time in these parts (everything on "
             "it, this benchmark's own processes included).", "",
             "```sh", "make bench                                                   # runs it after the sections above, or alone:",
             "ORIENTD=$PWD/.build/release/orientd umockdev-wrapper /usr/bin/python3 -m bench power", "```", "",
             "Issue 29's benchmark. Every mode runs on the same simulated device, a umockdev testbed of its own: an IIO "
             f"accelerometer at 1000 counts per g (`in_accel_scale` {SCALE}) without `sampling_frequency`, so each daemon polls at "
             "its own rate (orientd `--acquisition poll --rate 25`, iio-sensor-proxy every 700 ms), with the udev properties "
             "`IIO_SENSOR_PROXY_TYPE` (iio-sensor-proxy's rule would set it; umockdev runs no rules) and `ACCEL_MOUNT_MATRIX` "
             "(for both daemons; in §3 the trace's). The modes: orientd with adaptive pacing at rest rates "
             + ", ".join(f"{r} Hz" for r in RATES if r) + f" (`--rest-rate N`, default {DEFAULT}), each read at {HELD} Hz "
             "instead while the device rests held in a hand (`--held-rate`, default 4, issue 38; docs/detection-log.md §16), at "
             f"{BEFORE_38} Hz for every rest, held or lying (`--rest-rate {BEFORE_38} --held-rate 0`, the behaviour before issue 38), and at its fixed rate "
             "(`--rest-rate 0`, the behaviour before issue 29); orientd on a sensor with a motion interrupt (`events/in_accel_{x,y,z}_mag_rising_en`; "
             "umockdev answers `IIO_GET_EVENT_FD_IOCTL` on the node with a pipe, and the benchmark writes an event into it when an "
             f"axis departs by more than {INTERRUPT_THRESHOLD} counts ({INTERRUPT_THRESHOLD / 1000:.2f} g) from a reference that "
             f"follows the readings by {INTERRUPT_FOLLOW:.0%} per write, as mma8452's transient detection high-pass filters them); "
             "and iio-sensor-proxy 3.0. A D-Bus client claims with ClaimAccelerometer on a "
             "private system bus (orientd `--dbus on --no-dbus-polkit`); a socket client subscribes to `device` (orientd "
             "`--dbus off`); each client timestamps a change as its thread receives it. Reads are counted with inotify "
             "(IN_ACCESS on `in_accel_x_raw`; each daemon reads the three axes together).", ""]

    # 1. rest
    lines += ["### 1. At rest, claimed", "",
              f"Every mode at once, each on its own testbed (and bus), one client claiming, the device lying in portrait for {REST} s "
              f"after {WARM_UP} s of settling. Sensor noise: every {NOISE_PERIOD * 1000:.0f} ms each axis is rewritten to its resting "
              f"value plus a whole number of counts drawn uniformly from ±{NOISE_COUNTS} (±{NOISE_COUNTS / 1000:.3f} g), the quantised "
              "noise of a phone accelerometer at a 25 Hz output data rate (a constant value would be a low-resolution part or an "
              "HID hub, which orientd serves as well: see docs/sensors.md, faults only on evidence), and the noise is far "
              "inside the motion margin (0.1 g). The writes are this "
              "benchmark's wake-ups, not the daemons'. Wake-ups: voluntary and involuntary context switches of all the "
              "daemon's threads (/proc/PID/task/*/status) per second; a voluntary one is the thread going to sleep (a wake-up "
              "to come), an involuntary one a preemption of a thread that was running anyway. CPU: the process's CPU-time clock "
              "(all threads, nanoseconds) per minute.", "",
              "| mode | reads/s | reads every | wake-ups/s | of which voluntary | CPU per minute | % of one core | wake-ups ÷ iio-sensor-proxy | CPU ÷ iio-sensor-proxy |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rp = resting[peer]

    def voluntary(r):
        return sum(v for v, _ in r["split"].values())

    for key, r in resting.items():
        lines.append(f"| {label(key)} | {r['reads']:.2f} | {ms(r['interval'])} | {r['wakeups']:.2f} | {voluntary(r):.2f} | "
                     f"{r['runtime_per_minute'] * 1000:.1f} ms | {r['runtime_per_minute'] / 60 * 100:.3f} % | "
                     + (" |" if key == peer else f"{ratio(r['wakeups'], rp['wakeups'])} | {ratio(r['runtime_per_minute'], rp['runtime_per_minute'])}")
                     + " |")
    ra, rf, rs = resting[adaptive], resting[fixed], resting[adaptive_socket]
    lines += ["", f"Adaptive ({DEFAULT} Hz) ÷ fixed, both on D-Bus: wake-ups {ratio(ra['wakeups'], rf['wakeups'])}, reads "
              f"{ratio(ra['reads'], rf['reads'])}, CPU {ratio(ra['runtime_per_minute'], rf['runtime_per_minute'])}.", "",
              "Wake-ups by thread (the thread's name: voluntary + involuntary switches per second):", ""]
    for key, r in resting.items():
        threads = sorted(r["split"].items(), key=lambda item: -sum(item[1]))
        lines.append(f"- {label(key)}: " + ", ".join(f"{name} {v:.2f} + {i:.2f}" for name, (v, i) in threads if v + i >= 0.005))
    # What wakes orientd besides its reads, whatever the rest rate.
    others = {name: v + i for name, (v, i) in ra["split"].items() if name != "orientd-poll" and v + i >= 0.005}
    lines += ["", f"Besides its reads (orientd-poll, one wake-up per read), orientd at rest ({DEFAULT} Hz, D-Bus) woke "
              + (", ".join(f"{name} {v:.2f}/s" for name, v in sorted(others.items(), key=lambda item: -item[1])) or "no other thread")
              + f" over the {REST} s: nothing wakes it periodically (no timer; the silence deadline is a timerfd the poll thread "
              "moves on, see docs/sensors.md), and the event loop's wake-ups, if any, are one-offs such as the start-up pages "
              "released a minute after start.", "",
              f"Target (issue 29): at rest and claimed ≤ 2 wake-ups/s — orientd adaptive ({DEFAULT} Hz) on D-Bus {mark(ra['wakeups'] <= 2)} "
              f"({ra['wakeups']:.2f}/s, {ratio(ra['wakeups'], rp['wakeups'])} iio-sensor-proxy's {rp['wakeups']:.2f}/s), on the socket "
              f"{mark(rs['wakeups'] <= 2)} ({rs['wakeups']:.2f}/s); on a sensor with a motion interrupt (D-Bus) "
              f"{mark(resting[mode_key('orientd', INTERRUPT)]['wakeups'] <= 2)} ({resting[mode_key('orientd', INTERRUPT)]['wakeups']:.2f}/s).", ""]
    imu = resting.get(mode_key("orientd", IMU))
    if imu:  # issue 50: the gyroscope costs nothing at rest
        lines += [f"An IMU (issue 50: `in_anglvel_{{x,y,z}}_raw` and `in_anglvel_scale` in the same device, rates 0 at rest): "
                  f"its gyroscope read {imu['gyro_reads']:.2f} times a second at rest (target 0: it runs only while the device "
                  f"moves) {mark(imu['gyro_reads'] == 0)}; the daemon's wake-ups {imu['wakeups']:.2f}/s against "
                  f"{ra['wakeups']:.2f}/s on the accelerometer alone (target: unchanged, ≤ 2/s) {mark(imu['wakeups'] <= 2)}; "
                  f"of them voluntary (the daemon's own) {voluntary(imu):.2f}/s against {voluntary(ra):.2f}/s, the rest "
                  "preemptions of a running thread, which depend on what else the machine runs.", ""]

    # 1b. in a hand
    if hand:
        hp = hand[peer]
        lines += ["### 1b. At rest in a hand, claimed", "",
                  f"As §1 for {REST // 2} s, but the device is held: besides the noise, z swings by up to {SWAY_COUNTS} counts "
                  f"(1° of tilt) at {SWAY_HZ} Hz, a hand's slow sway, far inside the motion margin. orientd reads a held device at "
                  f"its held rate ({HELD} Hz): a flick can come at any moment. This is the cost of that; a person holding the device "
                  "has its screen on.", "",
                  "| mode | reads/s | wake-ups/s | of which voluntary | CPU per minute | wake-ups ÷ iio-sensor-proxy | rate in force |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for key, r in hand.items():
            lines.append(f"| {label(key)} | {r['reads']:.2f} | {r['wakeups']:.2f} | {voluntary(r):.2f} | "
                         f"{r['runtime_per_minute'] * 1000:.1f} ms | " + ("" if key == peer else ratio(r['wakeups'], hp['wakeups']))
                         + f" | {r['rate'] if r.get('rate') is not None else '–'} |")
        lines += [""]
        held_imu = hand.get(mode_key("orientd", IMU))
        if held_imu:
            lines += [f"The IMU's gyroscope in a hand read {held_imu['gyro_reads']:.2f} times a second (a sway of 1° is no "
                      f"motion: target 0) {mark(held_imu['gyro_reads'] == 0)}.", ""]

    # 2. steps
    lines += ["### 2. Reaction to a step", "",
              f"{STEPS} steps between portrait and landscape (with the noise of §1) written into the simulated sysfs, the time "
              "until the client has the change; every mode at once, each in a process of its own. Today's pauses: 0.2–0.6 s "
              "before each step, as in §2 of the comparison above (orientd comes to rest within about half a second of a "
              "change, so some of these steps find it resting). From rest: 1.5 s (the device settles and the pace slows) plus "
              "up to 2 s drawn uniformly, so each step falls at an all but uniformly random phase of the rest poll (2 s holds 2 to 8 of its periods). \"At "
              "rest\": the steps that found orientd reading at its rest rate (the state's `rate`, read with `get` before the "
              "step; socket only).", "",
              "| mode | pauses | median | p95 | max | at rest | median ÷ fixed | p95 ÷ fixed |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for key, r in stepped.items():
        mode = parse_mode(key)
        for protocol, words in (("today", "0.2–0.6 s"), ("rest", "from rest")):
            values, rates = r[protocol]["reactions"], r[protocol]["rates"]
            resting_rate = 1 / 5 if mode["rest_rate"] == INTERRUPT else mode["rest_rate"]  # the interrupt's check reads
            at_rest = f"{sum(1 for x in rates if x == resting_rate)}/{len(rates)}" if mode["front"] == "socket" and mode["rest_rate"] else "–"
            base = stepped[fixed_socket][protocol]["reactions"]
            relative = (" | " if key == fixed_socket else
                        f"{ratio(percentile(values, 50), percentile(base, 50))} | {ratio(percentile(values, 95), percentile(base, 95))}")
            lines.append(f"| {label(key)} | {words} | {ms(percentile(values, 50))} | {ms(percentile(values, 95))} | {ms(max(values))} | "
                         f"{at_rest} | {relative} |")
    lines += ["", "A step at rest waits for the next read (up to one rest interval), then the detector decides at the sampling "
              "rate; a turn by hand takes 0.3–1 s and is seen while it is under way, which §3 measures.", ""]

    # 3. corpus
    lines += ["### 3. The public corpus in real time", "",
              f"Each of the {len(trace_names())} traces of `Tests/Fixtures/corpus/public` written into the simulated sysfs at its "
              "samples' times (in "
              f"the sensor's frame, rounded to counts; `mounted_rotated`'s matrix through `ACCEL_MOUNT_MATRIX`), the claim at a "
              f"random moment of the first {1000 / RATE:.0f} ms (orientd's sampling period), once the daemon serves (D-Bus: `HasAccelerometer`; the socket: a `get` "
              "that names the sensor); the changes the client saw, timed from the trace's start, scored with `Tests/Fixtures/corpus/score.py` "
              "(latency from the start of each settled interval, that is from the end of each turn as the labels have it). "
              "orientd's socket client has all seven device orientations (scored both ways); iio-sensor-proxy has no face "
              "states and is scored with `--iio` (the upright-only rules). The modes of one trace play at once, each in a "
              f"process of its own, trace after trace; the whole corpus {rounds} times (rounds), pooled: transitions, missed "
              "and false changes are summed over the rounds, median and p95 taken over every round's transitions. Taken back: a "
              "change undone within 1 s while the labels stayed the same (the screen turns and turns back; issue 48).", "",
              "| mode | rules | transitions | missed | false changes | taken back | latency median | latency p95 | p95 by round | startup | error time | reads/s while playing |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pools = {}
    for key, r in played.items():
        for rules in ("all", "upright"):
            if not r[rules]:
                continue
            o = pools[(key, rules)] = pooled(r[rules])
            lines.append(f"| {label(key)} | {'seven states' if rules == 'all' else 'upright only'} | {o['transitions']} | {o['missed']} | "
                         f"{o['false']} | {o['taken_back']} | {s(o['median'])} | {s(o['p95'])} | " + " / ".join(f"{p:.3f}" if p is not None else "–" for p in o["p95_by_round"])
                         + f" | {s(o['startup'])} | {o['error']:.2f} % | {r['reads']:.1f} |")
    lines += ["", "Per trace, false changes over the rounds (upright-only rules; " + " / ".join(short(k) for k in played) + "): "
              + ", ".join(f"{name} " + "/".join(str(pools[(k, 'upright')]["false_by_trace"][name]) for k in played) for name in trace_names()) + "."]
    backs = {name: [pools[(k, "all")]["back_by_trace"][name] for k in played if (k, "all") in pools] for name in trace_names()}
    flapped = [f"{name} " + "/".join(map(str, counts)) for name, counts in backs.items() if any(counts)]
    lines += ["", "Changes taken back over the rounds (seven states; " + " / ".join(short(k) for k in played if (k, "all") in pools)
              + "): " + (", ".join(flapped) if flapped else "none in any mode") + "."]
    pa = played[adaptive_socket]
    if pa.get("rests") is not None:
        lines[-1] += (f" orientd adaptive (the default) came to rest {pa['rests']} times (held or lying) and sped up {pa['moves']} times over the "
                      f"{len(trace_names())} traces × {rounds}.")
    lines += ["", f"The writer kept time: at the 99th percentile of every trace its writes were at most "
              f"{max(r['lateness'] for r in played.values()) * 1000:.1f} ms late (the worst single write "
              f"{max(r['late_max'] for r in played.values()) * 1000:.1f} ms)."]
    a, b = checked["alone"], checked["rounds"]
    lines += ["", f"Does playing {len(played)} modes side by side on {os.cpu_count()} cores distort the latencies? The control: the "
              f"{len(CONTROL)} traces with the most turns ({', '.join(CONTROL)}) played again for the fixed rate alone after the "
              f"run, {a['n']} transitions: median/p95 {s(a['one'][0])}/{s(a['one'][1])} side by side (round 1) against "
              f"{s(a['two'][0])}/{s(a['two'][1])} alone; a transition's two latencies differ by {s(a['median_difference'])} in the "
              f"median and at most {s(a['max_difference'])}."]
    if b:
        lines[-1] += (f" Two plays side by side (rounds 1 and 2) differ as much: {s(b['median_difference'])} in the median, at "
                      f"most {s(b['max_difference'])} (median/p95 {s(b['one'][0])}/{s(b['one'][1])} and {s(b['two'][0])}/{s(b['two'][1])}): "
                      "no two plays read the trace at the same phase, and a decision near a threshold can move by a few readings.")
    for key, words in ((adaptive_socket, f"orientd adaptive, the default ({DEFAULT} Hz lying, {HELD} Hz held)"),
                       (before_38, f"orientd at {BEFORE_38} Hz held or lying (before issue 38)"),
                       (mode_key("orientd", INTERRUPT, "socket"), "orientd on a motion interrupt"),
                       (fixed_socket, "for comparison, the fixed rate")):
        if key not in played:
            continue
        o = pools[(key, "all")]
        lines += ["", f"Targets (issues 29, 38 and 48), {words}, seven states: 0 missed — {mark(o['missed'] == 0)} ({o['missed']}); "
                  f"0 false changes — {mark(o['false'] == 0)} ({o['false']}); 0 taken back — {mark(o['taken_back'] == 0)} "
                  f"({o['taken_back']}); latency median ≤ 0.10 s — "
                  f"{mark(o['median'] is not None and o['median'] <= 0.10)} ({s(o['median'])}); p95 ≤ 0.20 s — "
                  f"{mark(o['p95'] is not None and o['p95'] <= 0.20)} ({s(o['p95'])})"]
        if key in resting:
            lines[-1] += f"; at rest on a table ≤ 2 wake-ups/s (§1) — {mark(resting[key]['wakeups'] <= 2)} ({resting[key]['wakeups']:.2f}/s)"
        lines[-1] += "."
    lines += [""]

    # 4. trade-off
    lines += twins_section(m["twins"]) if "twins" in m else []
    lines += ["### 4. The trade-off: rest rate against latency", "",
              "The figures above side by side: wake-ups, reads and CPU at rest (§1, D-Bus claim), the corpus in real time (§3, "
              "seven states, pooled) and the step from rest (§2, socket).", "",
              "| rest rate | wake-ups/s at rest | reads/s at rest | CPU per minute at rest | corpus missed | corpus false | corpus median | corpus p95 | step from rest, median | step from rest, p95 |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rate in RATES + (INTERRUPT,):
        r, c = resting[mode_key("orientd", rate)], pools[(mode_key("orientd", rate, "socket"), "all")]
        st = stepped[mode_key("orientd", rate, "socket")]["rest"]["reactions"]
        name = "fixed (0)" if rate == 0 else "motion interrupt (check every 5 s)" if rate == INTERRUPT else f"{rate} Hz"
        lines.append(f"| {name} | {r['wakeups']:.2f} | {r['reads']:.2f} | {r['runtime_per_minute'] * 1000:.1f} ms | "
                     f"{c['missed']} | {c['false']} | {s(c['median'])} | {s(c['p95'])} | {ms(percentile(st, 50))} | {ms(percentile(st, 95))} |")
    st, c = stepped[peer]["rest"]["reactions"], pools[(peer, "upright")]
    lines.append(f"| iio-sensor-proxy (700 ms poll; corpus by the upright-only rules) | {rp['wakeups']:.2f} | {rp['reads']:.2f} | "
                 f"{rp['runtime_per_minute'] * 1000:.1f} ms | {c['missed']} | {c['false']} | {s(c['median'])} | {s(c['p95'])} | "
                 f"{ms(percentile(st, 50))} | {ms(percentile(st, 95))} |")
    lines += ["", "<!-- power-benchmark:end -->"]
    return "\n".join(lines)


def twins_section(played):
    """§3b: the twins in real time for the default mode, and issue 50's targets for them."""
    key = mode_key("orientd", DEFAULT, "socket")
    r = played[key]
    o = pooled(r["all"])
    names = trace_names(TWINS)
    walking = [latency for sc in r["all"] for _, latency in sc["transitions"].get("walk_hand_off_axis", [])]
    slowest_walking = max((x for x in walking if x is not None), default=None)
    lines = ["### 3b. The corpus's twins in real time, with a gyroscope", "",
             f"Each of the {len(names)} traces of `Tests/Fixtures/corpus/public-gyro` (the public traces with a gyroscope's rates, "
             "issue 50) played as in §3 into a simulated IMU: the accelerometer's attributes and, in the same IIO device, "
             f"`in_anglvel_{{x,y,z}}_raw` at `in_anglvel_scale` {GYRO_SCALE} rad/s per count. orientd runs its default mode "
             f"(socket) and switches the gyroscope on only while the pace is fast, using its readings once its start-up "
             "has passed (docs/detection-log.md §18). One mode, so trace after trace alone; the whole corpus "
             + ("once." if len(r["all"]) == 1 else f"{len(r['all'])} times, pooled as in §3."), "",
             "| mode | transitions | missed | false changes | taken back | latency median | latency p95 | p95 by round | startup | error time | reads/s while playing |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             f"| {label(key)}, IMU | {o['transitions']} | {o['missed']} | {o['false']} | {o['taken_back']} | {s(o['median'])} | "
             f"{s(o['p95'])} | " + " / ".join(f"{p:.3f}" if p is not None else "–" for p in o["p95_by_round"])
             + f" | {s(o['startup'])} | {o['error']:.2f} % | {r['reads']:.1f} |", "",
             "Error time by trace (the rounds' mean, the largest first): "
             + ", ".join(f"{name} {value:.2f} %" for name, value in sorted(o["error_by_trace"].items(), key=lambda item: -(item[1] or 0))[:8])
             + ".", "",
             f"Targets (issue 50, in real time): 0 missed — {mark(o['missed'] == 0)} ({o['missed']}); 0 false changes — "
             f"{mark(o['false'] == 0)} ({o['false']}); 0 taken back — {mark(o['taken_back'] == 0)} ({o['taken_back']}); "
             f"latency median ≤ 0.03 s — {mark(o['median'] is not None and o['median'] <= 0.03)} ({s(o['median'])}); "
             f"p95 ≤ 0.08 s — {mark(o['p95'] is not None and o['p95'] <= 0.08)} ({s(o['p95'])}); error time ≤ 0.5 % — "
             f"{mark(o['error'] <= 0.5)} ({o['error']:.2f} %); `walk_hand_off_axis`'s turns ≤ 0.25 s after they end — "
             f"{mark(slowest_walking is not None and slowest_walking <= 0.25)} (slowest {s(slowest_walking)}).", ""]
    return lines


def power_section():
    write_section("power-benchmark", "Power: adaptive pacing against the fixed rate and iio-sensor-proxy", section(measure()))


if __name__ == "__main__" and sys.argv[1:2] == ["play"]:
    print(json.dumps(play(*sys.argv[2:5])))
elif __name__ == "__main__" and sys.argv[1:2] == ["steps"]:
    print(json.dumps(step_series(sys.argv[2], int(sys.argv[3]))))
elif __name__ == "__main__" and sys.argv[1:2] == ["rest"]:
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else REST
    print(json.dumps(rest([mode_key("orientd", r) for r in RATES] + [mode_key("orientd", DEFAULT, "socket"), "iio-sensor-proxy"], seconds), indent=1, default=str))
elif __name__ == "__main__" and sys.argv[1:2] == ["realtime"]:
    # The corpus in real time for the default mode alone (socket), POWER_ROUNDS times: the pooled score
    # with changes taken back. ORIENTD picks the binary, so two builds can be compared side by side.
    result = corpus([mode_key("orientd", DEFAULT, "socket")], None, ROUNDS)[mode_key("orientd", DEFAULT, "socket")]
    summary = {k: v for k, v in pooled(result["all"]).items()}
    summary.update(reads=result["reads"], lateness=result["lateness"], orientd=ORIENTD)
    print(json.dumps(summary, default=str))
elif __name__ == "__main__" and sys.argv[1:2] == ["section"]:
    power_section()
elif __name__ == "__main__" and sys.argv[1:2] == ["rewrite"]:
    # The section again from the raw figures of the last run (no measuring).
    write_section("power-benchmark", "Power: adaptive pacing against the fixed rate and iio-sensor-proxy",
                          section(json.load(open(RAW))))
