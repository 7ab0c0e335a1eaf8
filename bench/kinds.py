"""Ambient light and proximity, orientd against iio-sensor-proxy, measured in one run: the reaction
of a claiming D-Bus client to a step, and what each daemon costs at rest with the accelerometer and
the light claimed, beside a floor. Writes its section of docs/benchmarks.md (marker
kinds-benchmark); `python3 -m bench kinds` runs this section alone, `make bench` runs it
after the others.

Run under umockdev-wrapper, as every section is: each daemon reads a umockdev testbed of its own."""
import os
import random
import shutil
import subprocess
import tempfile
import time

from bench.common import (
    HERE, ORIENTD, IN_ACCESS, percentile, log, load, cost_since, machine, peer_version, mark, write_section,
    real_path, AccessLog, Claimant,
)
from bench.peer import SERVERS
from sensorproxy import PrivateSystemBus  # noqa: E402 (bench.common put Tests/integration on the path)
from testbed import Testbed  # noqa: E402
from gi.repository import GLib  # noqa: E402 (testbed and sensorproxy choose the versions)

DAEMONS = ("orientd", "iio-sensor-proxy")
STEPS = 40  # per kind and daemon
REST = 60  # seconds of rest measured for the CPU time and wake-ups
LIGHT = ("100", "400")  # lux, in_illuminance_input
PROXIMITY = ("0", "200")  # in_proximity_raw, either side of the near level
NEAR_LEVEL = "100"


# ---------------------------------------------------------------- the simulated device

def add_device(bed):
    """The same device for both daemons: an accelerometer (iio:device0), a polled light sensor
    (iio:device1) and a proximity sensor (iio:device2). orientd finds each by its attributes;
    iio-sensor-proxy by the udev property its own rule (80-iio-sensor-proxy.rules) sets on a
    device, IIO_SENSOR_PROXY_TYPE, which umockdev does not run rules to add. No
    integration_time: each daemon polls the light at its own default interval."""
    accel = bed.add_accelerometer(0, name="accel", raw=(0, -1000, 0), scale="0.00981", sampling=None,
                                  properties={"IIO_SENSOR_PROXY_TYPE": "iio-poll-accel", "NAME": '"accel"'})
    light = bed.add_light(1, name="als", attributes={"in_illuminance_input": LIGHT[0]},
                          properties={"IIO_SENSOR_PROXY_TYPE": "iio-poll-als"})
    prox = bed.add_light(2, name="prox", attributes={"in_proximity_raw": PROXIMITY[0], "in_proximity_nearlevel": NEAR_LEVEL},
                         properties={"IIO_SENSOR_PROXY_TYPE": "iio-poll-proximity"})
    return dict(accel=accel, light=light, prox=prox)


# ---------------------------------------------------------------- one daemon and its claimant


class Served:
    """One daemon serving the simulated device on a private system bus, with a claimant."""

    def __init__(self, server):
        self.server = server
        self.bus = PrivateSystemBus()
        self.bed = Testbed()
        self.paths = add_device(self.bed)
        self.process = subprocess.Popen(SERVERS[server](), env=self.bus.env(self.bed.env()),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = Claimant(self.bus)
        deadline = time.monotonic() + 10
        while True:
            try:
                if all(self.client.get(p) for p in ("HasAccelerometer", "HasAmbientLight", "HasProximity")):
                    break
            except GLib.Error:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"{server} did not publish the accelerometer, the light and the proximity sensor")
            time.sleep(0.05)
        self.reads = AccessLog({"accel": real_path(self.bed, self.paths["accel"], "in_accel_x_raw"),
                                "light": real_path(self.bed, self.paths["light"], "in_illuminance_input"),
                                "prox": real_path(self.bed, self.paths["prox"], "in_proximity_raw")})

    def stop(self):
        self.reads.close()
        self.client.close()
        self.process.kill()
        self.process.wait()
        self.bus.stop()
        self.bed.cleanup()


# ---------------------------------------------------------------- reaction to a step

def poll_interval(run, label, since):
    """The daemon's interval between two reads of the file, from five reads after `since` (a
    `mark()` taken before the claim)."""
    deadline = time.monotonic() + 10
    while run.reads.mark()[label] - since[label] < 5:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{run.server} does not read {label} after the claim")
        time.sleep(0.05)
    return run.reads.interval(label, since)


def steps(run, device, attribute, values, key, expected, period, rng):
    """STEPS steps of `attribute` between its two `values`, each after a pause drawn uniformly
    from two of the daemon's poll periods (so the step falls at a uniformly random phase of its
    poll); per step the time from the write to the claimant's PropertiesChanged whose `key` is
    the expected value."""
    reactions = []
    current = 0
    for _ in range(STEPS):
        time.sleep(0.05 + rng.uniform(0, 2 * period))
        target = 1 - current
        since = len(run.client.changes)
        written = time.monotonic()
        run.bed.set_attribute(run.paths[device], attribute, values[target])
        when = run.client.wait(lambda changed: changed.get(key) == expected[target], since, timeout=10)
        if when is None:
            raise RuntimeError(f"{run.server}: no {key} {expected[target]} within 10 s of the step")
        reactions.append(when - written)
        current = target
    return reactions


def reaction(server, seed):
    """Light, then proximity, on one daemon: the claim to the first LightLevel, the steps, and the
    interval at which the daemon read each attribute meanwhile."""
    rng = random.Random(seed)
    run = Served(server)
    try:
        since, light_reads, claimed = len(run.client.changes), run.reads.mark(), time.monotonic()
        run.client.call("ClaimLight")
        first = run.client.wait(lambda changed: changed.get("LightLevel") == float(LIGHT[0]), since, timeout=10)
        if first is None:
            raise RuntimeError(f"{server}: no LightLevel after ClaimLight")
        light_interval = poll_interval(run, "light", light_reads)
        light = steps(run, "light", "in_illuminance_input", LIGHT, "LightLevel", tuple(float(v) for v in LIGHT), light_interval, rng)
        light_interval = run.reads.interval("light", light_reads)  # over the whole run
        run.client.call("ReleaseLight")
        prox_reads = run.reads.mark()
        run.client.call("ClaimProximity")
        prox_interval = poll_interval(run, "prox", prox_reads)  # and the far state read before the first step
        prox = steps(run, "prox", "in_proximity_raw", PROXIMITY, "ProximityNear", (False, True), prox_interval, rng)
        prox_interval = run.reads.interval("prox", prox_reads)
        return dict(first_light=first - claimed, light=light, prox=prox, light_interval=light_interval, prox_interval=prox_interval)
    finally:
        run.stop()


# ---------------------------------------------------------------- cost at rest


def rest_cost():
    """Both daemons at once, each on its own bus and testbed, the accelerometer and the light
    claimed, nothing changing: CPU time and wake-ups over REST seconds, and the intervals at which
    each read the accelerometer and the light meanwhile."""
    runs = {}
    try:
        for server in DAEMONS:
            runs[server] = Served(server)
        for run in runs.values():
            run.client.call("ClaimAccelerometer")
            run.client.call("ClaimLight")
        time.sleep(3)  # the first readings and claims settled; then the rest is measured
        marks, before = {}, {}
        for server, run in runs.items():
            marks[server], before[server] = run.reads.mark(), load(run.process.pid)
        time.sleep(REST)
        out = {}
        for server, run in runs.items():
            out[server] = cost_since(run.process.pid, before[server])
            out[server].update(accel_interval=run.reads.interval("accel", marks[server]),
                               light_interval=run.reads.interval("light", marks[server]))
        return out
    finally:
        for run in runs.values():
            run.stop()


def floor_cost(intervals):
    """bench/floor/poll.swift, compiled here, run at each daemon's measured intervals (the three
    accelerometer attributes at one, the light at the other) on a testbed of its own, both at
    once, for REST seconds: what polling the same files as often costs with nothing else."""
    swiftc = shutil.which("swiftc")
    if swiftc is None:
        return {}
    work = tempfile.mkdtemp(prefix="bench-kinds-floor-")
    binary = os.path.join(work, "poll")
    if subprocess.run([swiftc, "-O", os.path.join(HERE, "floor", "poll.swift"), "-o", binary],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        return {}
    running = {}
    try:
        for server, (accel, light) in intervals.items():
            bed = Testbed()
            paths = add_device(bed)
            accel_files = ",".join(f"{paths['accel']}/in_accel_{axis}_raw" for axis in "xyz")
            process = subprocess.Popen([binary, f"{accel:.4f}", accel_files, f"{light:.4f}", f"{paths['light']}/in_illuminance_input"],
                                       env=bed.env(), stdout=subprocess.PIPE, text=True)
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the poll floor did not start (exit {process.wait()})")
            running[server] = (bed, process)
        time.sleep(3)
        before = {server: load(process.pid) for server, (_, process) in running.items()}
        time.sleep(REST)
        return {server: cost_since(process.pid, before[server]) for server, (_, process) in running.items()}
    finally:
        for bed, process in running.values():
            process.kill()
            process.wait()
            bed.cleanup()
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- the section

def measure():
    reactions = {}
    for index, server in enumerate(DAEMONS):
        log(f"kinds: light and proximity steps on {server} ({2 * STEPS} steps) …")
        reactions[server] = reaction(server, seed=10 + index)
    log(f"kinds: both daemons at rest with the accelerometer and the light claimed ({REST} s) …")
    rest = rest_cost()
    log(f"kinds: the poll floor at both daemons' intervals ({REST} s) …")
    floors = floor_cost({server: (rest[server]["accel_interval"], rest[server]["light_interval"]) for server in DAEMONS})
    return reactions, rest, floors


def ms(seconds):
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


def ratio(a, b):
    return f"{a / b:.2f}×" if b else "–"


def kinds_section():
    started = time.monotonic()
    reactions, rest, floors = measure()
    o, p = reactions["orientd"], reactions["iio-sensor-proxy"]
    lines = ["<!-- kinds-benchmark:begin -->", "",
             f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; iio-sensor-proxy {peer_version()} (Debian), "
             f"orientd release build. This section took {time.monotonic() - started:.0f} s.", "",
             "```sh", "make bench                                                   # runs it after the sections above, or alone:",
             "ORIENTD=$PWD/.build/release/orientd umockdev-wrapper /usr/bin/python3 -m bench kinds", "```", "",
             "Each daemon serves net.hadess.SensorProxy on a private D-Bus system bus, under umockdev, from the same simulated "
             "device: an accelerometer, a polled light sensor (`in_illuminance_input`, no `integration_time`, so each daemon "
             "polls at its own default) and a proximity sensor (`in_proximity_raw`, `in_proximity_nearlevel` "
             f"{NEAR_LEVEL}); each device also has the udev property `IIO_SENSOR_PROXY_TYPE` that iio-sensor-proxy's udev rule "
             "would set (umockdev runs no rules), which orientd ignores (it finds sensors by their attributes). orientd runs "
             "as `bench/peer.py` runs it (`--dbus on --no-dbus-polkit --rate 25`, with its default adaptive pace). The same Gio client claims the sensor and "
             "timestamps each PropertiesChanged as it is dispatched. How often each daemon reads an attribute is measured "
             "(inotify IN_ACCESS on the simulated sysfs file: the median time between two reads).", "",
             "### Reaction to a step", "",
             f"{STEPS} steps per kind and daemon, each written into the simulated sysfs after a pause drawn uniformly from two "
             "of the daemon's measured read intervals (so each step falls at a uniformly random phase of its poll); the time "
             f"from the write to the claimant's PropertiesChanged carrying the new value. Light: `in_illuminance_input` {LIGHT[0]} ↔ {LIGHT[1]} "
             f"(LightLevel) after ClaimLight. Proximity: `in_proximity_raw` {PROXIMITY[0]} ↔ {PROXIMITY[1]} across the near "
             f"level {NEAR_LEVEL} (ProximityNear) after ClaimProximity.", "",
             "| step | daemon | reads every | median | p95 | max | median, orientd ÷ iio-sensor-proxy | p95, orientd ÷ iio-sensor-proxy |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for kind, key, interval in (("light", "light", "light_interval"), ("proximity", "prox", "prox_interval")):
        for server, r in (("orientd", o), ("iio-sensor-proxy", p)):
            row = f"| {kind} | {server} | {ms(r[interval])} | {ms(percentile(r[key], 50))} | {ms(percentile(r[key], 95))} | {ms(max(r[key]))} |"
            if server == "orientd":
                row += (f" {ratio(percentile(o[key], 50), percentile(p[key], 50))} |"
                        f" {ratio(percentile(o[key], 95), percentile(p[key], 95))} |")
            else:
                row += " | |"
            lines.append(row)
    lines += ["", "Both daemons poll: a step is seen on the next read after it, so the reaction is spread over one read "
              "interval (the median about half of it, the maximum about all of it) plus the time to send the signal.", "",
              f"From ClaimLight to the first LightLevel: orientd {ms(o['first_light'])}, iio-sensor-proxy {ms(p['first_light'])} "
              "(one claim each)" + (": iio-sensor-proxy arms its light timer on the claim and first reads when it fires, one "
                                    "interval later, while orientd reads at once." if p["first_light"] > 0.5 * p["light_interval"]
                                    > o["first_light"] else "."), ""]
    lines += ["### Cost at rest, the accelerometer and the light claimed", "",
              f"Both daemons at once, each on its own bus and testbed, one client holding ClaimAccelerometer and ClaimLight on "
              f"each, nothing changing, {REST} s. CPU time: utime + stime of the process (/proc/PID/stat, 10 ms ticks) and the "
              "scheduler's runtime of all its threads, ended ones included (the process's CPU-time clock, `clock_getcpuclockid`, nanoseconds), per minute. Wake-ups: voluntary and "
              "involuntary context switches of all threads (/proc/PID/task/*/status) per second.", "",
              "The floor: `bench/floor/poll.swift`, compiled here, which opens the three `in_accel_*_raw` files and "
              "`in_illuminance_input` once and reads them with one pread(2) each at the intervals measured for a daemon, and "
              "does nothing else (no parsing, no udev, no D-Bus); one floor per daemon, both at once on testbeds of their "
              f"own, for {REST} s after the daemons.", "",
              "| | reads accelerometer / light every | CPU per minute (utime+stime) | CPU per minute (runtime) | % of one core | wake-ups/s |",
              "|---|---:|---:|---:|---:|---:|"]
    for server in DAEMONS:
        r = rest[server]
        lines.append(f"| {server} | {ms(r['accel_interval'])} / {ms(r['light_interval'])} | {r['cpu_per_minute'] * 1000:.0f} ms | "
                     f"{r['runtime_per_minute'] * 1000:.1f} ms | {r['runtime_per_minute'] / 60 * 100:.3f} % | {r['wakeups']:.1f} |")
    for server in DAEMONS:
        if server in floors:
            f = floors[server]
            lines.append(f"| floor at {server}'s intervals | {ms(rest[server]['accel_interval'])} / {ms(rest[server]['light_interval'])} | "
                         f"{f['cpu_per_minute'] * 1000:.0f} ms | {f['runtime_per_minute'] * 1000:.1f} ms | "
                         f"{f['runtime_per_minute'] / 60 * 100:.3f} % | {f['wakeups']:.1f} |")
    ro, rp = rest["orientd"], rest["iio-sensor-proxy"]
    lines += ["", f"orientd ÷ iio-sensor-proxy: CPU {ratio(ro['runtime_per_minute'], rp['runtime_per_minute'])} (runtime; "
              f"{ratio(ro['cpu_per_minute'], rp['cpu_per_minute'])} by ticks), wake-ups {ratio(ro['wakeups'], rp['wakeups'])}."]
    lines[-1] += (f" orientd reads the accelerometer every {ro['accel_interval'] * 1000:.0f} ms to iio-sensor-proxy's "
                  f"{rp['accel_interval'] * 1000:.0f} ms (at rest its adaptive pace, {1 / ro['accel_interval']:.1f} Hz; once the device "
                  "moves 25 Hz, the rate its detector filters: the Power section below) "
                  f"and the light {rp['light_interval'] / ro['light_interval']:.1f} times as often.")
    if len(floors) == len(DAEMONS):
        fo, fp = floors["orientd"], floors["iio-sensor-proxy"]
        lines[-1] += (f" Each against its floor: orientd CPU {ratio(ro['runtime_per_minute'], fo['runtime_per_minute'])}, wake-ups "
                      f"{ratio(ro['wakeups'], fo['wakeups'])}; iio-sensor-proxy CPU {ratio(rp['runtime_per_minute'], fp['runtime_per_minute'])}, "
                      f"wake-ups {ratio(rp['wakeups'], fp['wakeups'])}.")
    else:
        lines[-1] += " The floor was not measured (no swiftc)."
    lines += ["", "Wake-ups by thread (the thread's name): " + "; ".join(
        f"{server}: " + ", ".join(f"{name} {rate:.1f}/s" for name, rate in sorted(rest[server]["by_thread"].items(), key=lambda item: -item[1])
                                  if rate >= 0.05) for server in DAEMONS) + "."]
    lines += ["", "<!-- kinds-benchmark:end -->"]
    write_section("kinds-benchmark", "Light and proximity against iio-sensor-proxy", "\n".join(lines))
