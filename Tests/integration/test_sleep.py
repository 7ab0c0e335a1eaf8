"""Sleep and resume (issue 72): orientd follows logind's PrepareForSleep on the system bus, here
python-dbusmock's logind on a private bus. Before a sleep it stops reading and closes its buffers,
then lets its delay inhibitor go; after the resume every claimed sensor is read afresh and the
orientation shown is the one the device holds now, never the one from before and never `unknown`
in between. A sensor removed during the sleep is said gone, one that comes back is found again,
and claims survive both. A buffer that stays silent after the resume is read through its
attributes meanwhile."""
import os
import subprocess
import time
import unittest

from gi.repository import GLib

from daemon import Client
from sensorproxy import BusClient, PrivateSystemBus
from testbed import ReadCounter, TestbedCase

RAW = {"normal": (0, -1000, 0), "left-up": (1000, 0, 0), "bottom-up": (0, 1000, 0)}
LOGIND, LOGIND_PATH = "org.freedesktop.login1", "/org/freedesktop/login1"


class SleepCase(TestbedCase):
    """A private system bus with logind's mock on it, one accelerometer, orientd serving the bus."""
    buffered = False

    def setUp(self):
        super().setUp()
        self.bus = PrivateSystemBus()
        self.addCleanup(self.bus.stop)
        self.logind_client = self.client()
        logind = self.logind_client.wait_for_name(LOGIND, lambda: subprocess.Popen(
            ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "logind"],
            stdout=subprocess.DEVNULL, env=self.bus.env()))
        self.addCleanup(lambda: (logind.terminate(), logind.wait(10)))
        self.device = self.bed.add_accelerometer(0, raw=RAW["normal"], buffered=self.buffered,
                                                 trigger="bmi160-dev0" if self.buffered else None)
        self.socket_path = os.path.join(self.bus.directory, "orientd.sock")
        self.daemon = self.start("serve", "--socket", self.socket_path, "--config", "/dev/null", "--dbus", "on",
                                 "--no-dbus-polkit", "--claim-linger", "0", "--log-level", "debug",
                                 env=self.bus.env(self.bed.env()))
        self.daemon.wait_for(lambda d: d.stderr_contains("serving net.hadess.SensorProxy"), what="the bus name")
        self.daemon.wait_for(lambda d: d.stderr_contains("following logind"), what="logind followed")
        self.wait_for_inhibitor(True, "the delay inhibitor taken at start")

    def client(self):
        client = BusClient(self.bus)
        self.addCleanup(client.close)
        return client

    def socket_client(self, topics=("device", "sensor")):
        client = Client(self.socket_path)
        self.addCleanup(client.close)
        self.assertTrue(client.request("subscribe", topics=list(topics))["ok"])
        return client

    def pose(self, name):
        self.bed.set_raw(self.device, *RAW[name])

    def inhibitors(self):
        """orientd's inhibitors as logind lists them: (what, who, why, mode)."""
        listed = self.logind_client.call("ListInhibitors", interface=f"{LOGIND}.Manager", path=LOGIND_PATH,
                                         destination=LOGIND, reply_type="(a(ssssuu))")[0]
        return [entry[:4] for entry in listed if entry[1] == "orientd"]

    def wait_for_inhibitor(self, held, what):
        # Asked again at every wake-up of the client's loop (at least every 100 ms): logind's mock
        # signals nothing when an inhibitor comes or goes.
        self.logind_client.wait_for(lambda _: bool(self.inhibitors()) == held, what=what)
        if held:
            self.assertEqual(self.inhibitors(), [("sleep", "orientd", "stops reading the sensors and closes their buffers",
                                                  "delay")])

    def prepare_for_sleep(self, sleeping):
        self.logind_client.call(
            "EmitSignal", GLib.Variant("(sssav)", (f"{LOGIND}.Manager", "PrepareForSleep", "b",
                                                   [GLib.Variant("b", sleeping)])),
            interface="org.freedesktop.DBus.Mock", path=LOGIND_PATH, destination=LOGIND)

    def sleep(self, socket_client):
        """logind announces a sleep; returns once orientd has stopped reading and let its delay go."""
        self.prepare_for_sleep(True)
        socket_client.next_event(lambda e: e["topic"] == "sensor" and e["to"] == "idle")
        self.wait_for_inhibitor(False, "the delay inhibitor let go")

    def events_until(self, client, predicate):
        """Every event up to and including the first that `predicate` accepts."""
        events = []
        while True:
            events.append(client.next_event())
            if predicate(events[-1]):
                return events


class TurnedDuringSleep(SleepCase):
    def test_clients_see_the_pose_held_after_the_resume_and_nothing_in_between(self):
        claimant = self.client()
        claimant.call("ClaimAccelerometer")
        self.assertEqual(claimant.get("AccelerometerOrientation"), "normal")
        socket_client = self.socket_client()
        self.assertEqual(socket_client.request("get")["state"]["device"], "portrait")
        self.sleep(socket_client)
        # Asleep: nothing is read (a measurement window, not a synchronisation).
        reads = ReadCounter(os.path.join(self.bed.root, self.device.lstrip("/"), "in_accel_x_raw"))
        self.addCleanup(reads.close)
        self.assertEqual(reads.count(1.0), 0)
        state = socket_client.request("get")["state"]
        self.assertEqual((state["sensor"], state["device"]), ("idle", "portrait"))  # claimed, not read
        self.pose("left-up")  # turned while asleep
        self.prepare_for_sleep(False)
        events = self.events_until(socket_client, lambda e: e["topic"] == "device")
        self.assertEqual([(e["topic"], e["from"], e["to"]) for e in events],
                         [("sensor", "idle", "active"), ("device", "portrait", "landscapeRight")])
        claimant.wait_for(lambda c: "left-up" in c.orientations(), what="left-up on the bus")
        self.assertEqual(claimant.orientations()[-1:], ["left-up"])
        self.assertNotIn("undefined", claimant.orientations())
        self.wait_for_inhibitor(True, "a new delay inhibitor for the next sleep")
        self.daemon.wait_for(lambda d: d.stderr_contains("the system resumed: sensors read afresh"), what="the log")

    def test_a_pose_unchanged_by_the_sleep_publishes_nothing(self):
        socket_client = self.socket_client()
        self.client().call("ClaimAccelerometer")
        self.sleep(socket_client)
        self.prepare_for_sleep(False)
        socket_client.next_event(lambda e: e["topic"] == "sensor" and e["to"] == "active")
        # Read again and turned only now: the next device event is that turn, from portrait.
        ReadCounter(os.path.join(self.bed.root, self.device.lstrip("/"), "in_accel_x_raw")).wait_for_reads(
            3, "reads after the resume")
        self.pose("bottom-up")
        event = socket_client.next_event(lambda e: e["topic"] == "device")
        self.assertEqual((event["from"], event["to"]), ("portrait", "portraitUpsideDown"))


class SensorGoneDuringSleep(SleepCase):
    def test_a_sensor_removed_while_asleep_is_said_gone_and_found_again_with_its_claims(self):
        claimant = self.client()
        claimant.call("ClaimAccelerometer")
        socket_client = self.socket_client()
        self.sleep(socket_client)
        self.bed.remove(self.device)
        self.prepare_for_sleep(False)
        # Said when udev says it (here at once; on a device, when the system thaws).
        events = self.events_until(socket_client, lambda e: e["topic"] == "sensor" and e["to"] == "absent")
        self.assertEqual([(e["topic"], e["to"]) for e in events], [("device", "unknown"), ("sensor", "absent")])
        claimant.wait_for(lambda c: c.get("HasAccelerometer") is False, what="HasAccelerometer false")
        # It comes back: found again, read for the claim that stood all along.
        self.device = self.bed.add_accelerometer(0, raw=RAW["left-up"])
        event = socket_client.next_event(lambda e: e["topic"] == "device")
        self.assertEqual((event["from"], event["to"]), ("unknown", "landscapeRight"))
        claimant.wait_for(lambda c: c.get("AccelerometerOrientation") == "left-up", what="left-up on the bus")


class SilentBufferAfterResume(SleepCase):
    buffered = True

    def test_a_buffer_silent_after_the_resume_is_read_through_its_attributes(self):
        socket_client = self.socket_client()
        self.client().call("ClaimAccelerometer")
        self.daemon.wait_for(lambda d: self.bed.attribute(self.device, "buffer/enable") == "1", what="buffer enabled")
        base = time.monotonic_ns()
        self.bed.write_scans(0, [(*RAW["normal"], base + k * 40_000_000) for k in range(4)])
        self.assertEqual(socket_client.next_event(lambda e: e["topic"] == "device")["to"], "portrait")
        self.sleep(socket_client)
        self.assertEqual(self.bed.attribute(self.device, "buffer/enable"), "0")  # closed before the sleep
        self.pose("left-up")
        self.prepare_for_sleep(False)
        # Nothing is written into the buffer: the attributes give the pose.
        event = socket_client.next_event(lambda e: e["topic"] == "device")
        self.assertEqual((event["from"], event["to"]), ("portrait", "landscapeRight"))
        self.daemon.wait_for(lambda d: d.stderr_contains("its attributes are read until it does"), what="the note")
        lines = self.daemon.stderr_lines
        resumed = max(i for i, line in enumerate(lines) if "the system resumed" in line)
        self.assertEqual(sum("its attributes are read until it does" in line for line in lines[resumed:]), 1)


class WithoutLogind(TestbedCase):
    def test_no_logind_on_the_bus_is_said_once_and_nothing_else_changes(self):
        bus = PrivateSystemBus()
        self.addCleanup(bus.stop)
        self.bed.add_accelerometer(0, raw=RAW["normal"])
        socket_path = os.path.join(bus.directory, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off",
                            env=bus.env(self.bed.env()))
        daemon.wait_for(lambda d: d.stderr_contains("logind not followed (logind is not on the system bus)"),
                        what="the notice")
        client = Client(socket_path)
        self.addCleanup(client.close)
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        self.assertEqual(client.next_event(lambda e: e["topic"] == "device")["to"], "portrait")
        self.assertEqual(sum("logind not followed" in line for line in daemon.stderr_lines), 1)

    def test_no_system_bus_is_said_once(self):
        self.bed.add_accelerometer(0, raw=RAW["normal"])
        env = self.bed.env(DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/system_bus_socket")
        daemon = self.start("serve", "--socket", os.path.join(self.bed.root, "orientd.sock"), "--config", "/dev/null",
                            "--dbus", "off", env=env)
        daemon.wait_for(lambda d: d.stderr_contains("logind not followed (connecting to the system bus"),
                        what="the notice")
        self.assertIn("a sleep is noticed by the clock alone", next(
            line for line in daemon.stderr_lines if "logind not followed" in line))


if __name__ == "__main__":
    unittest.main()
