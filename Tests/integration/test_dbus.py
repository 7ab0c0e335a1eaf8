"""net.hadess.SensorProxy on a private system bus, over a umockdev accelerometer, with clients
nobody here wrote: Debian's monitor-sensor, Qt's QOrientationSensor (Qt Sensors' iio-sensor-proxy
backend) and a Gio client."""
import json
import os
import queue
import re
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from gi.repository import GLib

from daemon import Client, Daemon
from sensorproxy import BusClient, PrivateSystemBus
from testbed import NOBODY, ORIENTD, ROOT, TestbedCase, as_another_user, changes_user, reachable_by_everyone, rss_anon_kib

ORIENTCTL = os.path.join(os.path.dirname(ORIENTD), "orientctl")

HERE = os.path.dirname(os.path.abspath(__file__))
ACCESS_DENIED, LIMITS_EXCEEDED = "org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.LimitsExceeded"
RAW = {  # raw units at scale 0.00981 m/s² per unit: 1000 = 1 g, in the display frame
    "normal": (0, -1000, 0), "left-up": (1000, 0, 0), "right-up": (-1000, 0, 0), "bottom-up": (0, 1000, 0),
    "face-up": (0, 0, -1000), "face-down": (0, 0, 1000),
    "tilted-up": (0, -707, -707), "tilted-down": (0, -707, 707),  # 45° from upright
}


class LineReader:
    """A client's stdout, read line by line as it comes (select-based, with a deadline)."""

    def __init__(self, process):
        self.process = process
        self.lines = []
        self.buffer = b""

    def wait_for(self, text, timeout=10, after=0):
        """Reads until a line from index `after` on contains `text`."""
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines[after:]):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {text!r}; lines so far: {self.lines}")
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError(f"client exited ({self.process.wait()}) before {text!r}; lines: {self.lines}")
                self.buffer += chunk
                *complete, self.buffer = self.buffer.split(b"\n")
                self.lines += [line.decode(errors="replace") for line in complete]


class SensorProxyCase(TestbedCase):
    """orientd serving the private bus with polkit checks off (the polkit tests turn them on)."""
    polkit = False
    options = ()  # more of `orientd serve`'s options

    def setUp(self):
        super().setUp()
        self.bus = PrivateSystemBus()
        self.addCleanup(self.bus.stop)
        self.device = self.bed.add_accelerometer(0, raw=RAW["normal"])
        args = ["serve", "--socket", os.path.join(self.bus.directory, "orientd.sock"), "--config", "/dev/null",
                "--dbus", "on", "--claim-linger", "0", "--log-level", "debug"]
        if not self.polkit:
            args.append("--no-dbus-polkit")
        self.daemon = self.start(*args, *self.options, env=self.bus.env(self.bed.env()))
        self.daemon.wait_for(lambda d: d.stderr_contains("serving net.hadess.SensorProxy"), what="the bus name")

    def pose(self, name):
        self.bed.set_raw(self.device, *RAW[name])

    def client(self):
        client = BusClient(self.bus)
        self.addCleanup(client.close)
        return client

    def spawn(self, *argv):
        process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.bus.env())
        self.addCleanup(lambda: (process.terminate(), process.wait(10)))
        return LineReader(process)


class RealClients(SensorProxyCase):
    def test_monitor_sensor_prints_the_accelerometer_and_each_rotation(self):
        monitor = self.spawn("monitor-sensor")
        # monitor-sensor reads the property before it claims, when nothing has sampled yet.
        monitor.wait_for("=== Has accelerometer")
        monitor.wait_for("Accelerometer orientation changed: normal")
        for name in ("left-up", "bottom-up", "right-up", "normal"):
            seen_before = len(monitor.lines)
            self.pose(name)
            monitor.wait_for(f"Accelerometer orientation changed: {name}", after=seen_before)
        changes = [line.split(": ")[1] for line in monitor.lines if "orientation changed" in line]
        self.assertEqual(changes, ["normal", "left-up", "bottom-up", "right-up", "normal"])

    def test_monitor_sensor_prints_light_proximity_and_the_accelerometer_changing(self):
        light = self.bed.add_light(1, attributes={"in_illuminance_input": "40", "in_illuminance_integration_time": "0.05"})
        proximity = self.bed.add_proximity(2, raw=0, near_level=100)
        # The log says "available" on the daemon's loop; the bus's properties follow on the bus's
        # thread. monitor-sensor reads them once and then hears only what it claims, so it starts
        # once the bus says both. Nothing signals a change to a name that claims nothing (and a
        # claim would read the light before monitor-sensor can see it change): the properties are
        # asked again at every wake-up of the bus client's loop (at least every 100 ms).
        watcher = self.client()
        watcher.wait_for(lambda c: c.get("HasAmbientLight") and c.get("HasProximity"), what="HasAmbientLight and HasProximity")
        monitor = self.spawn("monitor-sensor")
        monitor.wait_for("=== Has ambient light sensor")
        monitor.wait_for("=== Has proximity sensor")
        monitor.wait_for("Light changed: 40.000000 (lux)")
        for step in range(3):
            seen_before = len(monitor.lines)
            self.bed.set_attribute(light, "in_illuminance_input", str(100 * (step + 1)))
            monitor.wait_for(f"Light changed: {100 * (step + 1)}.000000 (lux)", after=seen_before)
            seen_before = len(monitor.lines)
            self.bed.set_attribute(proximity, "in_proximity_raw", "150" if step % 2 == 0 else "10")
            monitor.wait_for(f"Proximity value changed: {1 if step % 2 == 0 else 0}", after=seen_before)
            seen_before = len(monitor.lines)
            self.pose("left-up" if step % 2 == 0 else "normal")
            monitor.wait_for(f"Accelerometer orientation changed: {'left-up' if step % 2 == 0 else 'normal'}", after=seen_before)

    def test_qt_orientation_sensor_reads_each_rotation(self):
        qt = self.spawn("/usr/bin/python3", os.path.join(HERE, "qt_orientation.py"))
        qt.wait_for("start")
        for pose, reading in (("left-up", "LeftUp"), ("right-up", "RightUp"), ("bottom-up", "TopDown"), ("normal", "TopUp")):
            seen_before = len(qt.lines)
            self.pose(pose)
            qt.wait_for(reading, after=seen_before)
        seen = qt.lines[qt.lines.index("start") + 1:]
        readings = [line for index, line in enumerate(seen) if index == 0 or seen[index - 1] != line]
        self.assertEqual(readings[-4:], ["LeftUp", "RightUp", "TopDown", "TopUp"])


class Interface(SensorProxyCase):
    def test_introspection_lists_every_member_of_both_objects(self):
        client = self.client()
        xml = client.introspect()
        for member in ("HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt", "HasAmbientLight", "LightLevelUnit",
                       "LightLevel", "HasProximity", "ProximityNear", "ClaimAccelerometer", "ReleaseAccelerometer",
                       "ClaimLight", "ReleaseLight", "ClaimProximity", "ReleaseProximity", "org.freedesktop.DBus.Peer",
                       "org.freedesktop.DBus.Properties", '<node name="Compass"/>'):
            self.assertIn(member, xml)
        compass = client.introspect("/net/hadess/SensorProxy/Compass")
        for member in ("HasCompass", "CompassHeading", "ClaimCompass", "ReleaseCompass"):
            self.assertIn(member, compass)
        properties = client.get_all()
        self.assertEqual(properties["HasAccelerometer"], True)
        self.assertEqual((properties["HasAmbientLight"], properties["LightLevelUnit"], properties["HasProximity"]), (False, "lux", False))
        self.assertEqual(client.get("HasCompass", "net.hadess.SensorProxy.Compass", "/net/hadess/SensorProxy/Compass"), False)

    def test_a_claim_while_another_client_reads_the_sensor_is_told_the_values_it_holds(self):
        """A client reads the properties before it claims (GDBusProxy caches them when it is made)
        and hears changes only once it claims: a value that changed in between, another client's
        sensor being read, is said to it at its claim, or its cache keeps `undefined` until the next
        turn (monitor-sensor did, on a real kernel, beside a socket subscriber)."""
        stale = self.client()
        self.assertEqual(stale.get("AccelerometerOrientation"), "undefined", "nothing reads the sensor yet")
        other = Client(os.path.join(self.bus.directory, "orientd.sock"))
        self.addCleanup(other.close)
        self.assertTrue(other.request("subscribe", topics=["device"])["ok"])
        other.next_event(lambda e: e["state"]["device"] == "portrait")
        stale.call("ClaimAccelerometer")
        stale.wait_for(lambda c: "normal" in c.orientations(), what="the orientation said at the claim")

    def test_the_first_claim_returns_with_an_orientation_to_read(self):
        client = self.client()
        client.call("ClaimAccelerometer")
        self.assertEqual(client.get("AccelerometerOrientation"), "normal")
        self.assertEqual(client.get("AccelerometerTilt"), "vertical")

    def test_the_first_reply_waits_at_most_a_second_for_an_upright_orientation(self):
        self.pose("face-up")  # lying flat from the start: no upright orientation to report
        client = self.client()
        started = time.monotonic()
        client.call("ClaimAccelerometer")
        waited = time.monotonic() - started
        self.assertGreaterEqual(waited, 0.9, "the reply did not wait for an orientation")
        self.assertLess(waited, 3.0, "the reply waited past its one-second deadline")
        self.assertEqual(client.get("AccelerometerOrientation"), "undefined")
        self.pose("left-up")
        self.daemon.wait_for(lambda d: client.get("AccelerometerOrientation") == "left-up", what="left-up after the deadline")

    def test_other_sensors_claims_succeed_and_change_nothing(self):
        client = self.client()
        for member in ("ClaimLight", "ReleaseLight", "ClaimProximity", "ReleaseProximity"):
            client.call(member)
        client.call("ClaimCompass", interface="net.hadess.SensorProxy.Compass", path="/net/hadess/SensorProxy/Compass")
        self.assertEqual(client.get("HasAmbientLight"), False)

    def test_claims_nest_per_name_and_changes_reach_claimants_only(self):
        claimant, bystander = self.client(), self.client()
        claimant.call("ClaimAccelerometer")
        claimant.call("ClaimAccelerometer")
        claimant.call("ReleaseAccelerometer")  # one release ends the name's claim, as in iio-sensor-proxy
        claimant.call("ReleaseAccelerometer")  # a release without a claim succeeds
        claimant.call("ClaimAccelerometer")
        self.pose("left-up")
        claimant.wait_for(lambda c: "left-up" in c.orientations())
        bystander.sync()
        self.assertEqual(bystander.changes, [])
        self.assertEqual(bystander.get("AccelerometerOrientation"), "left-up")

    def test_face_up_keeps_the_last_upright_orientation_and_the_tilt_is_the_incumbents(self):
        client = self.client()
        client.call("ClaimAccelerometer")
        self.pose("right-up")
        client.wait_for(lambda c: "right-up" in c.orientations())
        # Screen to the sky is iio-sensor-proxy's face-down (its sign, which its clients expect).
        self.pose("face-up")
        client.wait_for(lambda c: any(change.get("AccelerometerTilt") == "face-down" for change in c.changes), what="face-down")
        self.assertEqual(client.get("AccelerometerOrientation"), "right-up")
        self.pose("face-down")
        client.wait_for(lambda c: any(change.get("AccelerometerTilt") == "face-up" for change in c.changes), what="face-up")
        self.assertNotIn("undefined", client.orientations())
        for pose, tilt in (("tilted-up", "tilted-down"), ("tilted-down", "tilted-up")):
            self.pose(pose)
            client.wait_for(lambda c: any(change.get("AccelerometerTilt") == tilt for change in c.changes), what=tilt)
        self.assertEqual(client.get("AccelerometerTilt"), "tilted-up")

    def test_a_vanished_claimant_releases_the_sensor(self):
        client = self.client()
        client.call("ClaimAccelerometer")
        self.daemon.wait_for(lambda d: d.stderr_contains("sampling starts"), what="sampling")
        client.close()
        self.daemon.wait_for(lambda d: d.stderr_contains("claimant left the bus"), what="the claim to end")
        self.daemon.wait_for(lambda d: d.stderr_contains("no claims left: sampling stops"), what="sampling to stop")


class TheLock(SensorProxyCase):
    """The rotation lock means the same to a D-Bus claimant as to orientd's own clients: a greeter or
    a desktop that knows nothing of it stays put (issue 72)."""

    def socket_client(self):
        client = Client(os.path.join(self.bus.directory, "orientd.sock"))
        self.addCleanup(client.close)
        return client

    def turned_while_locked(self):
        """A claimant, the lock engaged in portrait (normal), the device turned to landscapeRight
        (iio-sensor-proxy's left-up) and known turned on the socket; returns the claimant and the
        socket client."""
        claimant = self.client()
        claimant.call("ClaimAccelerometer")
        self.assertEqual(claimant.get("AccelerometerOrientation"), "normal")
        socket_client = self.socket_client()
        self.assertTrue(socket_client.request("subscribe", topics=["device"])["ok"])
        self.assertTrue(socket_client.request("lock", on=True)["state"]["locked"])
        self.pose("left-up")
        socket_client.next_event(lambda e: e["topic"] == "device" and e["to"] == "landscapeRight")
        claimant.sync()
        return claimant, socket_client

    def test_a_claimant_hears_no_turn_the_lock_holds_back_and_the_device_once_it_is_released(self):
        claimant, socket_client = self.turned_while_locked()
        self.assertNotIn("left-up", claimant.orientations())
        self.assertEqual(claimant.get("AccelerometerOrientation"), "normal")
        self.assertFalse(socket_client.request("lock", on=False)["state"]["locked"])
        claimant.wait_for(lambda c: "left-up" in c.orientations(), what="left-up once unlocked")
        self.assertEqual(claimant.get("AccelerometerOrientation"), "left-up")


class TheLockOff(TheLock):
    """`[dbus] follows-lock = false`: a desktop with a lock of its own hears every turn."""
    options = ("--no-dbus-follows-lock",)

    def test_a_claimant_hears_no_turn_the_lock_holds_back_and_the_device_once_it_is_released(self):
        claimant, _ = self.turned_while_locked()
        claimant.wait_for(lambda c: "left-up" in c.orientations(), what="left-up while locked")
        self.assertEqual(claimant.get("AccelerometerOrientation"), "left-up")


class BadInput(SensorProxyCase):
    def test_wrong_calls_get_dbus_errors_and_the_daemon_serves_on(self):
        client, claimant = self.client(), self.client()
        claimant.call("ClaimAccelerometer")
        cases = [
            (lambda: client.call("ClaimAccelerometer", GLib.Variant("(s)", ("extra",))), "InvalidArgs"),
            (lambda: client.call("Explode"), "UnknownMethod"),
            (lambda: client.call("Set", GLib.Variant("(ssv)", (
                "net.hadess.SensorProxy", "AccelerometerOrientation", GLib.Variant("s", "normal"))),
                interface="org.freedesktop.DBus.Properties"), "PropertyReadOnly"),
            (lambda: client.get("NoSuchProperty"), "UnknownProperty"),
        ]
        # The standard interfaces check their arguments as GDBus (the incumbent) does: extra, missing
        # or mistyped ones are InvalidArgs, never an answer.
        properties, peer = "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"
        for member, interface, parameters in [
                ("Get", properties, GLib.Variant("(sss)", ("net.hadess.SensorProxy", "HasAccelerometer", "extra"))),
                ("Get", properties, GLib.Variant("(s)", ("net.hadess.SensorProxy",))),
                ("Get", properties, GLib.Variant("(su)", ("net.hadess.SensorProxy", 7))),
                ("GetAll", properties, GLib.Variant("(ss)", ("net.hadess.SensorProxy", "extra"))),
                ("Set", properties, GLib.Variant("(ss)", ("net.hadess.SensorProxy", "HasAccelerometer"))),
                ("Ping", peer, GLib.Variant("(s)", ("extra",))),
                ("GetMachineId", peer, GLib.Variant("(u)", (1,))),
                ("Introspect", "org.freedesktop.DBus.Introspectable", GLib.Variant("(s)", ("extra",)))]:
            cases.append((lambda m=member, i=interface, p=parameters: client.call(m, p, interface=i), "InvalidArgs"))
        self.assertEqual(client.call("Ping", None, interface=peer), ())
        self.assertTrue(client.get("HasAccelerometer"))
        for call, error in cases:
            with self.assertRaises(GLib.Error) as raised:
                call()
            self.assertIn(error, raised.exception.message)
        # A claimant that stops reading its messages (SIGSTOP: its GDBus thread no longer reads the
        # socket) while the device turns: the bus queues for it, orientd and the others go on.
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "from sensorproxy import BusClient, PrivateSystemBus\n"
                  "bus = PrivateSystemBus.__new__(PrivateSystemBus); bus.address = %r\n"
                  "client = BusClient(bus); client.call('ClaimAccelerometer'); print('claimed', flush=True)\n"
                  "import time; time.sleep(3600)\n") % (HERE, self.bus.address)
        stalled = subprocess.Popen(["/usr/bin/python3", "-c", script], stdout=subprocess.PIPE, text=True, env=self.bus.env())
        self.addCleanup(lambda: (stalled.kill(), stalled.wait()))
        self.assertEqual(stalled.stdout.readline().strip(), "claimed")
        stalled.send_signal(signal.SIGSTOP)
        for turn in range(10):
            pose = ("left-up", "normal")[turn % 2]
            seen = len(claimant.orientations())
            self.pose(pose)
            claimant.wait_for(lambda c: pose in c.orientations()[seen:], what=f"turn {turn} to {pose}")
        for _ in range(50):  # a flood of names that claim and vanish
            passer = BusClient(self.bus)
            passer.call("ClaimAccelerometer")
            passer.close()
        self.pose("bottom-up")
        claimant.wait_for(lambda c: "bottom-up" in c.orientations())


class Polkit(SensorProxyCase):
    polkit = True

    def start_polkit(self, allowed):
        client = self.client()
        mock = client.wait_for_name("org.freedesktop.PolicyKit1", lambda: subprocess.Popen(
            ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"], stdout=subprocess.DEVNULL, env=self.bus.env()))
        self.addCleanup(lambda: (mock.terminate(), mock.wait(10)))
        client.connection.call_sync("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                    "org.freedesktop.DBus.Mock", "SetAllowed", GLib.Variant("(as)", (allowed,)),
                                    None, 0, 5000, None)
        return mock

    def polkit_mock(self, method, parameters=None, reply_type=None):
        return self.client().call(method, parameters, interface="org.freedesktop.DBus.Mock",
                                  path="/org/freedesktop/PolicyKit1/Authority", destination="org.freedesktop.PolicyKit1",
                                  reply_type=reply_type)

    def test_a_check_lost_when_polkit_stops_is_asked_again_and_not_refused(self):
        mock = self.start_polkit(["net.hadess.SensorProxy.claim-sensor"])
        self.polkit_mock("SimulateHang", GLib.Variant("(b)", (True,)))
        outcome = {}

        def claim():
            try:
                self.client().call("ClaimAccelerometer", timeout=30)
                outcome["claim"] = "granted"
            except GLib.Error as error:
                outcome["claim"] = error.message
        claimer = threading.Thread(target=claim)
        claimer.start()
        self.daemon.wait_for(lambda d: self.polkit_mock("HaveHangingCalls", reply_type="(b)")[0], what="the check in polkitd")
        # polkitd goes while it holds the check: the bus answers orientd NoReply. That is no refusal:
        # the caller is asked about again (here polkit is gone: the caller's uid decides, root).
        mock.terminate()
        mock.wait(10)
        claimer.join(30)
        self.assertEqual(outcome.get("claim"), "granted")
        self.daemon.wait_for(lambda d: d.stderr_contains("polkit check failed, retrying"), what="the retry in the log")

    def test_polkit_allows_the_claim_action(self):
        self.start_polkit(["net.hadess.SensorProxy.claim-sensor"])
        self.client().call("ClaimAccelerometer")

    def test_polkit_denies_other_claims(self):
        self.start_polkit([])
        with self.assertRaises(GLib.Error) as raised:
            self.client().call("ClaimAccelerometer")
        self.assertIn("AccessDenied", raised.exception.message)

    def set_polkit_delay(self, seconds):
        """dbusmock's polkitd answers each check after `seconds` (one at a time: a loaded polkitd)."""
        self.client().connection.call_sync("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock", "SetDelay", GLib.Variant("(d)", (seconds,)),
                                           None, 0, 5000, None)

    def flood(self, count, user=None):
        """A process that sends `count` claims of each of the four sensors at once on one connection
        (flood_claims.py), once they are all sent."""
        program = reachable_by_everyone(os.path.join(HERE, "flood_claims.py"))
        reader = self.spawn(*(user or []), "/usr/bin/python3", program, self.bus.address, str(count), "40")
        reader.wait_for("sent")
        return reader

    @changes_user
    def test_a_flood_of_claims_from_two_users_does_not_lock_the_desktop_out(self):
        self.start_polkit(["net.hadess.SensorProxy.claim-sensor"])
        self.set_polkit_delay(0.1)
        pid = self.daemon.process.pid
        # The daemon's descriptors and heap before the flood, the accelerometer already read for a
        # client that claimed it (the desktop's claim then opens nothing).
        self.client().call("ClaimAccelerometer")
        desktop = self.client()
        descriptors, heap = len(os.listdir(f"/proc/{pid}/fd")), rss_anon_kib(pid)
        flooders = [self.flood(150) for _ in range(4)] + [self.flood(150, as_another_user(self))]
        started = time.monotonic()
        desktop.call("ClaimAccelerometer", timeout=30)
        latency = time.monotonic() - started
        # Behind at most one check of each flooding connection (0.1 s each in this polkitd), not
        # behind their 3000 calls.
        self.assertLess(latency, 3.0, f"the desktop's claim took {latency:.2f} s")
        self.pose("left-up")
        desktop.wait_for(lambda c: "left-up" in c.orientations(), what="the desktop's orientation change")
        for flooder in flooders:
            flooder.wait_for('"unanswered"', timeout=45)
            result = json.loads(next(line for line in flooder.lines if '"unanswered"' in line))
            self.assertEqual((result["sent"], result["answered"], result["unanswered"]), (600, 600, 0), result)
            # polkit allows the action: every call orientd receives is granted. The bus lets a
            # connection wait for 128 replies at most and answers the rest LimitsExceeded itself.
            self.assertGreaterEqual(result["granted"], 128, result)
            self.assertEqual(set(result["errors"]) - {LIMITS_EXCEEDED}, set(), result)
            flooder.process.wait(10)
        # The flooders left the bus: their claims and calls are gone, and so is what they cost.
        self.daemon.wait_for(lambda d: len(os.listdir(f"/proc/{pid}/fd")) <= descriptors, what="the descriptors back")
        self.assertLess(rss_anon_kib(pid) - heap, 4096, "the heap grew by the flood and stayed")
        self.pose("normal")
        desktop.wait_for(lambda c: "normal" in c.orientations(), what="the desktop still served")

    @changes_user
    def test_refused_floods_are_answered_and_logged_once_per_caller_with_the_count(self):
        self.start_polkit([])
        self.set_polkit_delay(0.05)
        flooders = [self.flood(50), self.flood(50, as_another_user(self))]
        denied = []
        for flooder in flooders:
            flooder.wait_for('"unanswered"', timeout=45)
            result = json.loads(next(line for line in flooder.lines if '"unanswered"' in line))
            self.assertEqual((result["answered"], result["unanswered"], result["granted"]), (200, 0, 0), result)
            self.assertEqual(set(result["errors"]) - {ACCESS_DENIED, LIMITS_EXCEEDED}, set(), result)
            self.assertGreaterEqual(result["errors"].get(ACCESS_DENIED, 0), 128, result)  # what the bus let through
            denied.append(result["errors"][ACCESS_DENIED])
            flooder.process.wait(10)
        # Each caller's refusals: one line when the first came, one with the rest's count when it
        # left the bus (the minute had not passed).
        self.daemon.wait_for(lambda d: sum("before the caller left" in line for line in d.stderr_lines) == 2,
                             what="the refusals counted when the flooders left")
        refused = [line for line in self.daemon.stderr_lines if "claim refused" in line or "before the caller left" in line]
        self.assertEqual(len(refused), 4, refused)
        counts = sorted(int(re.search(r"refused=(\d+)", line).group(1)) for line in refused)
        self.assertEqual(counts, sorted([1, 1] + [count - 1 for count in denied]), refused)

    @changes_user
    def test_without_polkit_root_may_claim_and_others_may_not(self):
        self.client().call("ClaimAccelerometer")  # the tests run as root
        self.daemon.wait_for(lambda d: d.stderr_contains("polkit is not on the system bus"), what="the fallback to be logged")
        result = subprocess.run(as_another_user(self) + ["gdbus", "call", "--system",
                                 "--dest", "net.hadess.SensorProxy", "--object-path", "/net/hadess/SensorProxy",
                                 "--method", "net.hadess.SensorProxy.ClaimAccelerometer"],
                                capture_output=True, text=True, env=self.bus.env())
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("AccessDenied", result.stderr)


class NameAndMode(unittest.TestCase):
    """Who has the name, what `get` says about it, and SIGHUP applying `[dbus] mode`."""

    def setUp(self):
        self.bus = PrivateSystemBus()
        self.addCleanup(self.bus.stop)
        self.config = os.path.join(self.bus.directory, "orientd.toml")

    def daemon(self, mode):
        self.write_mode(mode)
        daemon = Daemon("--config", self.config, "--no-dbus-polkit", env=self.bus.env())
        self.addCleanup(daemon.stop)
        return daemon

    def write_mode(self, mode):
        with open(self.config, "w") as handle:
            handle.write(f'[dbus]\nmode = "{mode}"\n')

    def state(self, daemon):
        return daemon.client().request("get")["state"]

    def test_sighup_applies_the_mode_and_get_reports_it(self):
        daemon = self.daemon("off")
        self.assertEqual(self.state(daemon)["dbus"], "off")
        watcher = BusClient(self.bus)
        self.addCleanup(watcher.close)
        self.write_mode("auto")
        watcher.wait_for_name("net.hadess.SensorProxy", lambda: daemon.process.send_signal(signal.SIGHUP))
        daemon.wait_for_log("serving net.hadess.SensorProxy")
        self.assertEqual(self.state(daemon)["dbus"], "serving")
        self.assertEqual(watcher.get("HasAccelerometer"), True)
        self.write_mode("off")
        daemon.process.send_signal(signal.SIGHUP)
        daemon.wait_for_log("configuration reloaded", count=2)
        self.assertEqual(self.state(daemon)["dbus"], "off")
        has_owner = watcher.call("NameHasOwner", GLib.Variant("(s)", ("net.hadess.SensorProxy",)), interface="org.freedesktop.DBus",
                                 path="/org/freedesktop/DBus", destination="org.freedesktop.DBus")[0]
        self.assertFalse(has_owner)

    def test_on_without_a_bus_exits_69_and_names_the_bus(self):
        absent = "unix:path=" + os.path.join(self.bus.directory, "no-bus")
        socket_path = os.path.join(self.bus.directory, "on.sock")
        result = subprocess.run([ORIENTD, "serve", "--sensor", "stdin", "--socket", socket_path,
                                 "--config", "/dev/null", "--dbus", "on", "--log-level", "debug"], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=20, env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=absent))
        self.assertEqual(result.returncode, 69, result.stderr)
        self.assertIn("system bus", result.stderr)
        # The bus is the part that failed to start: what started before it stops, the last first.
        stopped = [line.split("part=")[1].split()[0] for line in result.stderr.splitlines() if "stopping part=" in line]
        self.assertEqual(stopped, ["socket", "display-sensor", "silence-alarm", "hub"], result.stderr)
        self.assertFalse(os.path.exists(socket_path), "the socket file is removed")

    def test_auto_without_a_bus_serves_the_socket_and_sighup_tries_again(self):
        # The bus's address is a path that does not exist yet; it appears (a link to the bus's
        # socket) between the start and the SIGHUP, as a bus that starts after orientd would.
        later = os.path.join(self.bus.directory, "later_bus_socket")
        self.write_mode("auto")
        daemon = Daemon("--config", self.config, "--no-dbus-polkit", env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + later))
        self.addCleanup(daemon.stop)
        status = self.state(daemon)["dbus"]
        self.assertTrue(status.startswith("not served: the system bus is not reachable"), status)
        self.assertEqual(sum("system bus is not reachable" in line for line in daemon.log), 1, daemon.log)
        os.symlink(os.path.join(self.bus.directory, "system_bus_socket"), later)
        watcher = BusClient(self.bus)
        self.addCleanup(watcher.close)
        watcher.wait_for_name("net.hadess.SensorProxy", lambda: daemon.process.send_signal(signal.SIGHUP))
        daemon.wait_for_log("serving net.hadess.SensorProxy")
        self.assertEqual(self.state(daemon)["dbus"], "serving")
        self.assertEqual(watcher.get("HasAccelerometer"), True)

    def test_a_bus_that_does_not_answer_delays_no_client(self):
        # A "bus" that accepts the connection and never answers: sd-bus then waits up to 25 s for
        # its authentication and the name. A SIGHUP that starts serving it must not hold up the
        # socket's clients meanwhile: their requests are answered and their events delivered at once.
        mute = os.path.join(self.bus.directory, "mute_bus_socket")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(mute)
        listener.listen(4)
        self.addCleanup(listener.close)
        # Every connection is accepted and kept: the sleep watch's (logind, at start) and the one
        # the SIGHUP makes for net.hadess.SensorProxy.
        accepted = queue.Queue()
        def accept():
            while True:
                try:
                    accepted.put(listener.accept()[0])
                except OSError:
                    return  # the listener closed
        threading.Thread(target=accept, daemon=True).start()
        self.write_mode("off")
        daemon = Daemon("--config", self.config, "--no-dbus-polkit", env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + mute))
        self.addCleanup(daemon.stop)
        sleep_watch = accepted.get(timeout=10)  # made at start, unanswered: it holds up nothing
        self.addCleanup(sleep_watch.close)
        client = daemon.client()
        self.addCleanup(client.close)
        client.request("subscribe", topics=["device"])
        daemon.pose("portrait")
        client.next_event(lambda e: e["topic"] == "device")
        self.write_mode("auto")
        daemon.process.send_signal(signal.SIGHUP)
        bus = accepted.get(timeout=10)  # orientd connects to the bus
        self.addCleanup(bus.close)
        delays = []
        for pose in ["landscapeLeft", "portrait", "landscapeRight", "portrait"]:
            started = time.monotonic()
            self.assertIn("dbus", client.request("get")["state"])
            delays.append(("get", time.monotonic() - started))
            started = time.monotonic()
            daemon.pose(pose)
            client.next_event(lambda e: e["topic"] == "device" and e["to"] == pose, timeout=30)
            delays.append((pose, time.monotonic() - started))
        # The bus is still waited for (25 s): every answer and event above came meanwhile.
        self.assertEqual(self.state(daemon)["dbus"], "off", "the reload is still waiting for the bus")
        slowest = max(delay for _, delay in delays)
        self.assertLess(slowest, 2.0, delays)
        bus.close()  # the bus goes away: the reload ends with it
        daemon.wait_for_log("configuration reloaded", timeout=30)
        self.assertTrue(self.state(daemon)["dbus"].startswith("not served"), self.state(daemon)["dbus"])

    def test_a_name_held_without_replacement_is_reported_and_the_socket_serves(self):
        holder = BusClient(self.bus)
        self.addCleanup(holder.close)
        reply = holder.call("RequestName", GLib.Variant("(su)", ("net.hadess.SensorProxy", 0)), interface="org.freedesktop.DBus",
                            path="/org/freedesktop/DBus", destination="org.freedesktop.DBus")
        self.assertEqual(reply[0], 1)  # primary owner, replacement not allowed
        daemon = self.daemon("auto")
        status = self.state(daemon)["dbus"]
        self.assertTrue(status.startswith("not served: net.hadess.SensorProxy is owned by another process"), status)
        self.assertTrue(any("net.hadess.SensorProxy is not served" in line for line in daemon.log), daemon.log)
        result = subprocess.run([ORIENTCTL, "get", "--socket", daemon.socket_path], capture_output=True, text=True)
        self.assertIn("dbus: not served: ", result.stdout, result.stderr)

    def test_the_name_is_taken_over_from_an_owner_that_allows_it(self):
        # iio-sensor-proxy 3.9 asks for the name allowing replacement (Debian's 3.0 does not; the
        # unit's Conflicts= stops it instead).
        holder = BusClient(self.bus)
        self.addCleanup(holder.close)
        lost = []
        holder.connection.signal_subscribe("org.freedesktop.DBus", "org.freedesktop.DBus", "NameLost", "/org/freedesktop/DBus",
                                           "net.hadess.SensorProxy", 0, lambda *args: lost.append(args[5].unpack()[0]))
        reply = holder.call("RequestName", GLib.Variant("(su)", ("net.hadess.SensorProxy", 1)), interface="org.freedesktop.DBus",
                            path="/org/freedesktop/DBus", destination="org.freedesktop.DBus")
        self.assertEqual(reply[0], 1)
        daemon = self.daemon("auto")
        self.assertEqual(self.state(daemon)["dbus"], "serving")
        holder.wait_for(lambda _: lost, what="NameLost at the previous owner")
        self.assertEqual(holder.get("HasAccelerometer"), True)  # now answered by orientd


@changes_user
class BusPolicy(unittest.TestCase):
    """The policy file the package installs (systemd/net.hadess.SensorProxy.conf), on a bus with
    Debian's restrictive default policy: root and orientd's user may own the name, anyone may call
    the interface and hears its changes, and another user may not own it."""

    def setUp(self):
        self.bus = PrivateSystemBus(policy=os.path.join(ROOT, "systemd", "net.hadess.SensorProxy.conf"))
        self.addCleanup(self.bus.stop)

    def daemon(self, **popen):
        daemon = Daemon("--config", "/dev/null", "--dbus", "on", "--no-dbus-polkit", env=self.bus.env(), **popen)
        self.addCleanup(daemon.stop)
        return daemon

    def test_root_owns_the_name_and_anyone_may_claim_and_hear_changes(self):
        daemon = self.daemon()
        daemon.wait_for_log("serving net.hadess.SensorProxy")
        daemon.pose("portrait")
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "from sensorproxy import BusClient, PrivateSystemBus\n"
                  "bus = PrivateSystemBus.__new__(PrivateSystemBus); bus.address = %r\n"
                  "client = BusClient(bus); client.call('ClaimAccelerometer'); print('claimed', flush=True)\n"
                  "client.wait_for(lambda c: 'left-up' in c.orientations()); print('left-up', flush=True)\n") % (reachable_by_everyone(HERE), self.bus.address)
        client = subprocess.Popen(as_another_user(self) + ["/usr/bin/python3", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=self.bus.env())
        self.addCleanup(lambda: client.poll() is None and (client.kill(), client.wait()))
        self.assertEqual(client.stdout.readline().strip(), "claimed", client.stderr.read() if client.poll() is not None else "")
        daemon.pose("landscapeRight")
        self.assertEqual(client.stdout.readline().strip(), "left-up", client.stderr.read() if client.poll() is not None else "")

    def test_only_root_and_geoclue_may_use_the_compass(self):
        daemon = self.daemon()
        daemon.wait_for_log("serving net.hadess.SensorProxy")
        compass = ("'/net/hadess/SensorProxy/Compass'", "'net.hadess.SensorProxy.Compass'")
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "from sensorproxy import BusClient, PrivateSystemBus\n"
                  "bus = PrivateSystemBus.__new__(PrivateSystemBus); bus.address = %r\n"
                  "client = BusClient(bus)\n"
                  "for call in (lambda: client.get('HasAccelerometer'), lambda: client.get('HasCompass', interface=%s, path=%s),\n"
                  "             lambda: client.call('ClaimCompass', interface=%s, path=%s)):\n"
                  "    try: call(); print('allowed', flush=True)\n"
                  "    except Exception as error: print('denied' if 'AccessDenied' in str(error) else error, flush=True)\n"
                  ) % (reachable_by_everyone(HERE), self.bus.address, compass[1], compass[0], compass[1], compass[0])
        for user, expected in ((NOBODY, ["allowed", "denied", "denied"]), (0, ["allowed", "allowed", "allowed"])):
            result = subprocess.run(as_another_user(self, user) + ["/usr/bin/python3", "-c", script], capture_output=True, text=True,
                                    env=self.bus.env(), timeout=30)
            self.assertEqual(result.stdout.split(), expected, result.stderr)

    def test_another_user_may_not_own_the_name_and_the_socket_is_served(self):
        directory = tempfile.mkdtemp(prefix="orientd-nobody-")
        os.chown(directory, NOBODY, NOBODY)
        daemon = Daemon("--config", "/dev/null", "--dbus", "auto", socket_path=os.path.join(directory, "orientd.sock"),
                        env=self.bus.env(), prefix=as_another_user(self), executable=reachable_by_everyone(ORIENTD))
        self.addCleanup(daemon.stop)
        daemon.wait_for_log("net.hadess.SensorProxy is not served")
        self.assertTrue(any("bus policy does not let this user own" in line for line in daemon.log), daemon.log)
        self.assertTrue(daemon.client().request("get")["ok"])


if __name__ == "__main__":
    unittest.main()
