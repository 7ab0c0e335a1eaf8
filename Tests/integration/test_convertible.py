"""A convertible under umockdev: a display and a base accelerometer read through libudev and libiio,
the hinge angle and the mode on the socket and on D-Bus, the base sensor removed and stalled."""
import math
import os
import struct
import tempfile

from daemon import Client
from sensorproxy import BusClient, PrivateSystemBus
from testbed import ROOT, ReadCounter, TestbedCase

UNIT = 0.00981  # m/s² per raw unit: 1000 = 1 g
G = 9.81


def folded(theta, roll=0.0):
    """Raw readings (display, base) of a convertible opened to `theta` degrees with its base flat,
    then rolled `roll` degrees onto its side (about the axis pointing away from the person).
    Both in the display's gravity-pointing frame after their matrices (docs/convertibles.md): the
    display's y-z projection is the base's turned by theta about the hinge (x)."""
    r, t = math.radians(roll), math.radians(theta)
    base = (G * math.sin(r), 0.0, G * math.cos(r))
    display = (base[0], math.cos(t) * base[1] - math.sin(t) * base[2], math.sin(t) * base[1] + math.cos(t) * base[2])
    raw = lambda v: tuple(round(c / UNIT) for c in v)
    return raw(display), raw(base)


class Convertible(TestbedCase):
    """orientd serving a display sensor (iio:device0, ACCEL_LOCATION=display) and a base sensor
    (iio:device1, label accel-base)."""

    def setUp(self):
        super().setUp()
        display, base = folded(110)
        self.display = self.bed.add_accelerometer(0, raw=display, properties={"ACCEL_LOCATION": "display"})
        self.base = self.bed.add_accelerometer(1, name="lis3lv02d", raw=base, attributes={"label": "accel-base"})
        self.directory = tempfile.mkdtemp(prefix="orientd-convertible-")
        self.socket_path = os.path.join(self.directory, "orientd.sock")

    def serve(self, *args, env=None):
        daemon = self.start("serve", "--socket", self.socket_path, "--config", "/dev/null", "--dbus", "off", "--rate", "50",
                            "--claim-linger", "0", "--log-level", "debug", *args, env=env)
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        return daemon

    def fold(self, theta, roll=0.0):
        display, base = folded(theta, roll)
        self.bed.set_raw(self.display, *display)
        self.bed.set_raw(self.base, *base)

    def client(self, *topics):
        client = Client(self.socket_path)
        self.addCleanup(client.close)
        reply = client.request("subscribe", topics=list(topics))
        self.assertTrue(reply["ok"], reply)
        return client

    def hinge_near(self, client, degrees, tolerance=3):
        """The first event (of any topic) whose state has the hinge within `tolerance` of `degrees`."""
        return client.next_event(lambda e: e["state"]["hinge"] is not None and abs(e["state"]["hinge"] - degrees) <= tolerance)

    def mode_becomes(self, client, mode):
        """The first event whose state has `mode` (the mode event itself, or one after it)."""
        return client.next_event(lambda e: e["state"]["mode"] == mode)

    def test_hinge_and_mode_follow_the_two_sensors(self):
        daemon = self.serve()
        client = self.client("hinge", "mode", "device", "interface")
        self.assertAlmostEqual(self.mode_becomes(client, "laptop")["state"]["hinge"], 110, delta=3)
        self.assertTrue(daemon.stderr_contains("base sensor available"))
        self.assertTrue(daemon.stderr_contains("iio:device1 (lis3lv02d), location base from sysfs label"))
        # Folding back past flat, through the angles between (the angle is kept continuous).
        for theta in (160, 200):
            self.fold(theta)
            self.hinge_near(client, theta)
        self.assertEqual(client.request("get")["state"]["mode"], "laptop", "between 155° and 205° nothing changes")
        self.fold(250)
        event = self.mode_becomes(client, "tablet")
        self.assertGreater(event["state"]["hinge"], 205)
        self.fold(320)
        self.hinge_near(client, 320)
        state = client.request("get")["state"]
        self.assertEqual(state["mode"], "tablet")
        # Opened again: laptop below 155°.
        for theta in (250, 180):
            self.fold(theta)
            self.hinge_near(client, theta)
        self.assertEqual(client.request("get")["state"]["mode"], "tablet")
        self.fold(120)
        self.assertLess(self.mode_becomes(client, "laptop")["state"]["hinge"], 155)

    def test_laptop_mode_keeps_the_natural_orientation_for_sockets_and_dbus(self):
        bus = PrivateSystemBus()
        self.addCleanup(bus.stop)
        self.serve("--dbus", "on", "--no-dbus-polkit", env=bus.env(self.bed.env()))
        client = self.client("device", "interface", "mode", "hinge")
        self.mode_becomes(client, "laptop")
        proxy = BusClient(bus)
        self.addCleanup(proxy.close)
        proxy.call("ClaimAccelerometer")
        self.assertEqual(proxy.get("AccelerometerOrientation"), "normal")
        # A laptop on its side (in bed): the display sensor reads landscape, the hinge is vertical.
        self.fold(110, roll=70)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight" and e["state"]["hinge"] is None)
        state = client.request("get")["state"]
        self.assertEqual((state["interface"], state["mode"]), ("portrait", "laptop"))
        self.assertEqual(proxy.get("AccelerometerOrientation"), "normal")
        self.assertFalse(any(e["topic"] == "interface" for e in client.events), client.events)
        # Folded into a tablet and held the same way: the interface follows the display.
        self.fold(110)
        for theta in (160, 200, 250):
            self.fold(theta)
            self.hinge_near(client, theta)
        self.fold(320)
        self.mode_becomes(client, "tablet")
        self.fold(320, roll=70)
        self.assertEqual(client.next_event(lambda e: e["topic"] == "interface")["to"], "landscapeLeft")
        proxy.wait_for(lambda p: p.get("AccelerometerOrientation") == "left-up", what="left-up on D-Bus")

    def test_the_base_samples_only_while_hinge_or_mode_is_wanted(self):
        daemon = self.serve("--no-laptop-keeps-normal")
        device = self.client("device")
        device.next_event(lambda e: e["topic"] == "device")
        daemon.wait_for(lambda d: d.stderr_contains("sensor claimed: sampling starts"), what="sampling")
        self.assertFalse(daemon.stderr_contains("base sensor claimed"))
        mode = self.client("mode")
        self.mode_becomes(mode, "laptop")
        daemon.wait_for(lambda d: d.stderr_contains("base sensor claimed"), what="the base sampling")
        mode.close()
        daemon.wait_for(lambda d: d.stderr_contains("base sensor sampling stops"), what="the base stopping")
        self.assertFalse(daemon.stderr_contains("no claims left: sampling stops"), "the display is still claimed")

    def test_the_display_is_read_at_the_rate_while_the_hinge_is_wanted(self):
        """The angle compares the two sensors' readings and forgets one older than 0.5 s, so while
        the base samples the display is not slowed to the rest rate (1.8 Hz would make the angle
        flicker to null between its reads); once the hinge is not wanted it rests as ever."""
        counter = ReadCounter(os.path.join(self.bed.root, self.display.lstrip("/"), "in_accel_y_raw"))
        self.addCleanup(counter.close)
        daemon = self.serve("--no-laptop-keeps-normal")
        device = self.client("device")
        hinge = self.client("hinge")
        self.hinge_near(hinge, 110)
        reads = counter.count(2.0)
        self.assertGreaterEqual(reads, 70, "50 Hz while the hinge is claimed (at rest 1.8 Hz would read about 4 times)")
        hinge.request("get")  # the events of the window, kept by the client
        self.assertEqual([e["state"]["hinge"] for e in hinge.events if e["state"]["hinge"] is None], [], "the angle stayed known")
        self.assertFalse(daemon.stderr_contains("the device rests"))
        hinge.close()
        daemon.wait_for(lambda d: d.stderr_contains("base sensor sampling stops"), what="the base stopping")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="the display resting")
        self.assertEqual(device.request("get")["state"]["rate"], 1.8)
        # Claimed again: once the base reads, the display is read at the rate again at once.
        hinge = self.client("hinge")
        self.hinge_near(hinge, 110)
        self.assertEqual(device.request("get")["state"]["rate"], 50)
        self.assertGreaterEqual(counter.count(1.0), 35, "50 Hz again")

    def test_a_base_sensor_removed_or_stalled_makes_the_angle_null_and_the_mode_hold(self):
        daemon = self.serve()
        client = self.client("hinge", "mode")
        self.assertAlmostEqual(self.mode_becomes(client, "laptop")["state"]["hinge"], 110, delta=3)
        self.bed.remove(self.base)
        self.assertIsNone(client.next_event(lambda e: e["topic"] == "hinge")["to"])
        daemon.wait_for(lambda d: d.stderr_contains("hinge angle unknown: the base sensor is gone; the mode holds"), what="the log")
        self.assertEqual(client.request("get")["state"]["mode"], "laptop")
        # It comes back (a new uevent): the angle with it.
        display, base = folded(110)
        self.base = self.bed.add_accelerometer(1, name="lis3lv02d", raw=base, attributes={"label": "accel-base"})
        self.hinge_near(client, 110)
        # Every read of the base fails (EIO): no samples, so after 0.5 s the angle is unknown.
        attribute = os.path.join(self.bed.root, self.base.lstrip("/"), "in_accel_y_raw")
        os.unlink(attribute)
        os.symlink("/proc/self/mem", attribute)
        self.assertIsNone(client.next_event(lambda e: e["topic"] == "hinge")["to"])
        daemon.wait_for(lambda d: d.stderr_contains("hinge angle unknown: the base sensor is silent"), what="the stall in the log")
        self.assertFalse(any(e["topic"] == "mode" for e in client.events), "the mode holds")
        os.unlink(attribute)
        self.bed.set_attribute(self.base, "in_accel_y_raw", str(base[1]))
        self.hinge_near(client, 110)
        self.assertEqual(sum("the base sensor is silent" in line for line in daemon.stderr_lines), 1, "logged once")


    def add_lid_switch(self, closed):
        """A "Lid Switch" input device (SW_LID in capabilities/sw) whose node is umockdev's pty:
        EVIOCGSW answers `closed` through an ioctl record, and what the test writes to the pty's
        other end is what the daemon reads as input events."""
        self.bed.add_input_device(7, "platform/PNP0C0D:00", "Lid Switch", "sw=1",
                                  [f"EVIOCGSW(0) 8 {'01' if closed else '00'}00000000000000"])
        return self.bed.bed.get_dev_fd("/dev/input/event7")

    def test_the_lid_switch_says_closed_or_folded_back(self):
        # 350° and -10° read alike: with the lid open, the daemon starts folded back (tablet).
        self.fold(350)
        lid = self.add_lid_switch(closed=False)
        daemon = self.serve()
        daemon.wait_for(lambda d: d.stderr_contains("lid switch found input.device=Lid Switch (/dev/input/event7)"), what="the lid switch")
        daemon.wait_for(lambda d: d.stderr_contains("lid switch open"), what="EVIOCGSW's answer")
        client = self.client("hinge", "mode")
        event = self.mode_becomes(client, "tablet")
        self.assertAlmostEqual(event["state"]["hinge"], 350, delta=3)
        # The lid closes (SW_LID 1, SYN_REPORT, as struct input_event on this ABI).
        os.write(lid, struct.pack("@llHHi", 0, 0, 5, 0, 1) + struct.pack("@llHHi", 0, 0, 0, 0, 0))
        daemon.wait_for(lambda d: d.stderr_contains("lid switch closed"), what="the event")
        # The angle's continuity wins while both sensors read; once it is forgotten (no claims, no
        # sampling), the same readings start from the switch's side: closed.
        client.close()
        daemon.wait_for(lambda d: d.stderr_contains("no claims left: sampling stops"), what="sampling to stop")
        client = self.client("hinge", "mode")
        event = self.mode_becomes(client, "laptop")
        self.assertLessEqual(event["state"]["hinge"], 3)

    def config(self, text):
        path = os.path.join(self.directory, "orientd.toml")
        with open(path, "w") as handle:
            handle.write(text)
        return path

    def test_the_tablet_mode_switch_says_why_it_cannot_be_created(self):
        # A node that is no uinput device: `on` tries and names the ioctl that failed.
        fake = os.path.join(self.directory, "uinput")
        open(fake, "w").close()
        daemon = self.start("serve", "--socket", self.socket_path, "--config", self.config(f'[hinge]\nuinput = "{fake}"\n'),
                            "--dbus", "off", "--tablet-mode-switch", "on")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        self.mode_becomes(self.client("mode"), "laptop")
        daemon.wait_for(lambda d: d.stderr_contains(f"the tablet-mode switch cannot be created error={fake}: UI_SET_EVBIT EV_SW: Inappropriate ioctl"),
                        what="the creation error")
        # auto with a uinput that is not there: said once, at the first mode.
        daemon.stop()
        os.unlink(self.socket_path) if os.path.exists(self.socket_path) else None
        daemon = self.start("serve", "--socket", self.socket_path, "--config", self.config('[hinge]\nuinput = "/nonexistent/uinput"\n'),
                            "--dbus", "off")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        self.mode_becomes(self.client("mode"), "laptop")
        daemon.wait_for(lambda d: d.stderr_contains("no tablet-mode switch: /nonexistent/uinput is not writable"), what="the reason")


class HingeAngleSensor(TestbedCase):
    """A ChromeOS-style convertible: a display accelerometer and the EC's lid angle
    (`cros-ec-lid-angle`, `in_angl_raw` in degrees, 500 when unreliable), no base accelerometer."""

    def test_the_measured_angle_is_the_angle(self):
        display, _ = folded(110)
        self.bed.add_accelerometer(0, raw=display)
        angle = self.bed.bed.add_device("iio", "iio:device1", None, ["name", "cros-ec-lid-angle\n", "in_angl_raw", "110\n"],
                                        ["DEVNAME", "/dev/iio:device1"])
        path = os.path.join(tempfile.mkdtemp(prefix="orientd-angle-"), "orientd.sock")
        daemon = self.start("serve", "--socket", path, "--config", "/dev/null", "--dbus", "off", "--log-level", "debug")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        self.assertTrue(daemon.stderr_contains("hinge-angle sensor read with the base sensor=iio:device1 (cros-ec-lid-angle) in_angl_raw"))
        client = Client(path)
        self.addCleanup(client.close)
        client.request("subscribe", topics=["hinge", "mode"])
        event = client.next_event(lambda e: e["state"]["mode"] is not None)
        self.assertEqual((event["state"]["mode"], event["state"]["hinge"]), ("laptop", 110))
        # Folded back in one go: a measured angle needs no continuity.
        self.bed.set_attribute(angle, "in_angl_raw", "358")
        self.assertEqual(client.next_event(lambda e: e["state"]["mode"] == "tablet")["state"]["hinge"], 358)
        # 500: the EC says unreliable. The angle is unknown; the mode holds.
        self.bed.set_attribute(angle, "in_angl_raw", "500")
        self.assertIsNone(client.next_event(lambda e: e["topic"] == "hinge")["to"])
        self.assertEqual(client.request("get")["state"]["mode"], "tablet")


    def test_a_hinge_sensor_plugged_in_later_is_read_and_one_removed_is_said(self):
        # Found by its udev watch like every sensor: none at start, one added while the hinge is
        # claimed is read at once; removed, the angle is unknown and the accelerometers decide alone.
        display, _ = folded(110)
        self.bed.add_accelerometer(0, raw=display)
        path = os.path.join(tempfile.mkdtemp(prefix="orientd-angle-"), "orientd.sock")
        daemon = self.start("serve", "--socket", path, "--config", "/dev/null", "--dbus", "off", "--log-level", "debug")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        self.assertTrue(daemon.stderr_contains("no hinge-angle sensor"), daemon.stderr_lines[-20:])
        client = Client(path)
        self.addCleanup(client.close)
        client.request("subscribe", topics=["hinge", "mode"])
        angle = self.bed.bed.add_device("iio", "iio:device1", None, ["name", "cros-ec-lid-angle\n", "in_angl_raw", "97\n"],
                                        ["DEVNAME", "/dev/iio:device1"])
        self.bed.bed.uevent(angle, "add")
        event = client.next_event(lambda e: e["topic"] == "hinge" and e["to"] == 97)
        self.assertEqual(event["state"]["hinge"], 97)
        daemon.wait_for(lambda d: d.stderr_contains("hinge-angle sensor read with the base sensor=iio:device1 (cros-ec-lid-angle) in_angl_raw"),
                        what="the sensor found")
        self.bed.remove(angle)
        # umockdev removes the device's files one by one: a look at it meanwhile may find it without
        # its name (then "iio:device1 (iio:device1)"). Either way its removal is said.
        daemon.wait_for(lambda d: any("iio:device1 (" in line and ") was removed" in line for line in d.stderr_lines),
                        what="the removal")


class ReplayedConvertible(TestbedCase):
    def test_a_two_sensor_trace_is_served_like_a_convertible(self):
        # At twice real time: sample times are the host's, so faster replays compress the physics
        # (the filters' time constants stay in host seconds) and a fast fold may unwrap the wrong way.
        trace = os.path.join(ROOT, "Tests/Fixtures/corpus-hinge/public/fold_to_tablet.csv")
        directory = tempfile.mkdtemp(prefix="orientd-replay-")
        path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--sensor", f"replay:{trace}?speed=2", "--socket", path, "--config", "/dev/null", "--dbus", "off")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(path)
        self.addCleanup(client.close)
        client.request("subscribe", topics=["mode"])
        modes = [client.next_event(lambda e: e["topic"] == "mode", timeout=20)["to"] for _ in range(3)]
        self.assertEqual(modes, ["laptop", "tablet", "laptop"])  # its labels: laptop, tablet from 6.2 s, laptop from 24.2 s
