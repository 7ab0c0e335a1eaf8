"""A net.hadess.SensorProxy server as it runs on a device: iio-sensor-proxy, or orientd serving the
same interface, under umockdev on a private D-Bus system bus, reading a simulated accelerometer whose
sysfs values follow a trace in real time. AccelerometerOrientation changes are recorded through
ClaimAccelerometer by the same Gio client for both. Shared by the sections, like bench/common.py."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from bench.common import ORIENTD
from sensorproxy import PrivateSystemBus  # noqa: E402 (bench.common put Tests/integration on the path)
from testbed import Testbed  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402


def orientd_server(*options):
    return lambda: [ORIENTD, "serve",
                    "--socket", os.path.join(tempfile.mkdtemp(prefix="peer-orientd-"), "o.sock"), "--config", "/dev/null",
                    "--dbus", "on", "--no-dbus-polkit", "--acquisition", "poll", "--rate", "25", *options, "--log-level", "warning"]


SERVERS = {
    "iio-sensor-proxy": lambda: ["/usr/sbin/iio-sensor-proxy"],
    # orientd polling at 25 Hz with its default adaptive pace (bench/kinds.py: as installed); the
    # device has no sampling_frequency attribute, as here.
    "orientd": orientd_server(),
    # The same at a fixed 25 Hz (the comparison's D-Bus rows; bench/power.py sets the two side by side).
    "orientd-fixed": orientd_server("--rest-rate", "0"),
}

SCALE = 0.00981  # m/s² per raw unit written to in_accel_scale

class PeerRun:
    """iio-sensor-proxy on a testbed with one accelerometer; `record()` returns (t, name) changes."""

    def __init__(self, mount_matrix=None, server="iio-sensor-proxy"):
        self.directory = tempfile.mkdtemp(prefix="peer-")
        self.bus = PrivateSystemBus()
        self.bed = Testbed()
        properties = {"IIO_SENSOR_PROXY_TYPE": "iio-poll-accel", "NAME": '"accel"'}
        if mount_matrix:
            properties["ACCEL_MOUNT_MATRIX"] = mount_matrix
        self.path = self.bed.add_accelerometer(0, name="accel", raw=(0, -1000, 0), scale=f"{SCALE}", properties=properties,
                                               sampling=None)
        self.proxy = subprocess.Popen(SERVERS[server](), env=self.bus.env(self.bed.env()), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        self.changes = []
        self.connection = Gio.DBusConnection.new_for_address_sync(
            self.bus.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        self.loop = GLib.MainLoop()
        self.thread = threading.Thread(target=self.loop.run, daemon=True)
        self.thread.start()
        self.sensor = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                proxy = Gio.DBusProxy.new_sync(self.connection, Gio.DBusProxyFlags.NONE, None, "net.hadess.SensorProxy",
                                               "/net/hadess/SensorProxy", "net.hadess.SensorProxy", None)
                if proxy.get_cached_property("HasAccelerometer") and proxy.get_cached_property("HasAccelerometer").unpack():
                    self.sensor = proxy
                    break
            except GLib.Error:
                pass
            time.sleep(0.1)
        if self.sensor is None:
            raise RuntimeError("iio-sensor-proxy did not publish an accelerometer")
        self.sensor.connect("g-properties-changed", self._changed)

    def _changed(self, proxy, changed, invalidated):
        values = changed.unpack()
        if "AccelerometerOrientation" in values:
            self.changes.append((time.monotonic(), values["AccelerometerOrientation"]))

    def claim(self):
        self.sensor.call_sync("ClaimAccelerometer", None, Gio.DBusCallFlags.NONE, -1, None)

    def set_reading(self, x, y, z):
        # In place, as the kernel changes an attribute (both servers read it from offset 0).
        self.bed.set_raw(self.path, *(int(round(value / SCALE)) for value in (x, y, z)))

    def current(self):
        return self.sensor.get_cached_property("AccelerometerOrientation").unpack()

    def stop(self):
        self.proxy.kill()
        self.proxy.wait()
        self.loop.quit()
        self.bus.stop()
        self.bed.cleanup()
        shutil.rmtree(self.directory, ignore_errors=True)


def replay_trace(csv_path, mount_matrix=None, speed=1.0, server="iio-sensor-proxy"):
    """Writes the trace into sysfs in real time; returns the server's changes as (trace t, name)."""
    samples = []
    with open(csv_path) as handle:
        for line in handle:
            if line[0] in "-0123456789":
                samples.append(tuple(map(float, line.split(","))))
    run = PeerRun(mount_matrix, server)
    try:
        run.set_reading(*samples[0][1:])
        # The trace's clock starts with the claim, and the trace plays on while the claim is in
        # flight: orientd answers the first claim once it has an orientation (as iio-sensor-proxy
        # 3.6+ does), Debian's 3.0 at once. Both servers are timed from the same moment.
        start = time.monotonic() - samples[0][0] / speed
        claim = threading.Thread(target=run.claim)
        claim.start()
        for t, x, y, z in samples:
            due = start + t / speed
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # pacing the simulated sensor, not synchronisation
            run.set_reading(x, y, z)
        claim.join()
        time.sleep(1.0)  # one more poll (700 ms) so the last change can be read
        return [((when - start) * speed, name) for when, name in run.changes]
    finally:
        run.stop()


if __name__ == "__main__":
    events = replay_trace(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None,
                          server=sys.argv[3] if len(sys.argv) > 3 else "iio-sensor-proxy")
    for t, name in events:
        print(json.dumps({"t": round(t, 4), "orientation": name}))
