"""Evdev accelerometers (ID_INPUT_ACCELEROMETER: hp_accel/lis3lv02d laptops, older tablets) under
umockdev: found after IIO ones, read through EVIOCGABS with the axes' resolution, selectable with
--sensor input:/dev/input/eventN, served on both front ends, and a vanished device said once."""
import os
import tempfile

from daemon import Client
from sensorproxy import BusClient, PrivateSystemBus
from testbed import TestbedCase, orientd


class InputAccelerometer(TestbedCase):
    def serve(self, *args, env=None):
        directory = tempfile.mkdtemp(prefix="orientd-input-")
        self.socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", self.socket_path, "--config", "/dev/null", "--dbus", "off",
                            "--claim-linger", "0", *args, env=env)
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(self.socket_path)
        self.addCleanup(client.close)
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        return daemon, client

    def test_listed_with_the_scale_from_its_resolution_and_after_iio(self):
        self.bed.add_input_accelerometer(4, values=(0, -1024, 0), resolution=1024, properties={"ACCEL_MOUNT_MATRIX": "-1, 0, 0; 0, 1, 0; 0, 0, 1"})
        listing = self.list_sensors()
        (sensor,) = listing["sensors"]
        self.assertEqual((sensor["identifier"], sensor["name"], sensor["deviceNode"]), ("input:/dev/input/event4", "lis3lv02d", "/dev/input/event4"))
        self.assertAlmostEqual(sensor["scale"][0], 9.80665 / 1024)
        self.assertAlmostEqual(sensor["readingMagnitude"], 9.80665, places=3)
        self.assertEqual((sensor["mountMatrixOrigin"], listing["selected"]), ("udev ACCEL_MOUNT_MATRIX", "input:/dev/input/event4"))
        # An IIO accelerometer, even with a higher number, comes first; the evdev one stays selectable.
        self.bed.add_accelerometer(7)
        listing = self.list_sensors()
        self.assertEqual(listing["selected"], "iio:device7")
        self.assertIn("IIO before evdev", listing["reason"])
        self.assertEqual(self.list_sensors("--sensor", "input:/dev/input/event4")["selected"], "input:/dev/input/event4")
        bad = orientd(self.bed, "list-sensors", "--sensor", "input:/dev/event4")
        self.assertEqual(bad.returncode, 64, bad.stderr)
        self.assertIn("expected input:/dev/input/eventN", bad.stderr)

    def test_without_a_resolution_256_per_g_and_both_front_ends(self):
        bus = PrivateSystemBus()
        self.addCleanup(bus.stop)
        self.bed.add_input_accelerometer(4, values=(256, 0, 0))
        daemon, client = self.serve("--dbus", "on", "--no-dbus-polkit", env=bus.env(self.bed.env()))
        self.assertEqual(client.next_event(lambda e: e["topic"] == "device")["state"]["device"], "landscapeRight")
        self.assertEqual(client.request("get")["state"]["sensor"], "active")
        proxy = BusClient(bus)
        self.addCleanup(proxy.close)
        self.assertTrue(proxy.get("HasAccelerometer"))
        proxy.call("ClaimAccelerometer")
        self.assertEqual(proxy.get("AccelerometerOrientation"), "left-up")

    def test_a_device_that_vanishes_is_said_once_and_comes_back(self):
        path = self.bed.add_input_accelerometer(5, values=(0, -256, 0))
        daemon, client = self.serve()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.bed.remove(path)
        client.next_event(lambda e: e["state"]["device"] == "unknown")
        self.assertEqual(client.request("get")["state"]["sensor"], "absent")
        daemon.wait_for(lambda d: d.stderr_contains("input:/dev/input/event5 (lis3lv02d) was removed"), what="the removal")
        # Plugged in again, it gets a new node (umockdev cannot make the same node twice either).
        self.bed.bed.uevent(self.bed.add_input_accelerometer(6, values=(0, 0, -256)), "add")
        client.next_event(lambda e: e["state"]["device"] == "faceUp")
        self.assertEqual(sum("was removed" in line for line in daemon.stderr_lines), 1)
