"""`orientd calibrate` on a simulated tablet: an accelerometer on an ACPI-enumerated i2c parent with a
modalias, the machine's DMI modalias, and a person (person.py) who follows the wizard's prompts with
the sensor mounted in several ways. The hwdb entry it installs in a scratch root is checked with
systemd's own `systemd-hwdb query`."""
import json
import os
import subprocess
import tempfile
import time

from person import WIZARD, Person
from testbed import ORIENTD, ROOT, Running, TestbedCase

DMI = "dmi:bvnAcmeBIOS:bvr1.07:bd03/14/2023:br1.7:svnAcme:pnSlate 10:pvr1.0:rvnAcme:rnSL10:rvr1.0:cvnAcme:ct30:cvr1.0:"
PARENT_MODALIAS = "acpi:BOSC0200:BOSC0200:"
UNIT = 0.00981  # m/s² per raw unit of the simulated sensor
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "calibration")


class Calibrate(TestbedCase):
    def setUp(self):
        super().setUp()
        self.bed.bed.add_device("dmi", "id", None, ["modalias", DMI + "\n", "sys_vendor", "Acme\n", "product_name", "Slate 10\n"], [])
        self.parent = self.bed.bed.add_device("i2c", "i2c-BOSC0200:00", None, ["modalias", PARENT_MODALIAS + "\n", "name", "BOSC0200:00\n"], [])
        self.scratch = tempfile.mkdtemp(prefix="orientd-calibrate-")

    def add_sensor(self, attributes=None, properties=None):
        self.sensor = self.bed.add_accelerometer(0, name="bmc150_accel", attributes=attributes, properties=properties,
                                                 parent=self.parent, raw=(0, 0, -1000))
        return self.sensor

    def calibrate(self, *args):
        process = self.start("calibrate", "--json", *args)
        process.json = lambda: [json.loads(line) for line in process.stdout_lines if line.startswith("{")]
        return process

    def write_reading(self, reading):
        """One reading of the simulated person, at the sensor's rate (25 Hz): pacing the person,
        not waiting for the program, which is awaited through its output."""
        self.bed.set_raw(self.sensor, *(round(c / UNIT) for c in reading))
        self.process._pump(0)
        time.sleep(1 / 25)

    def step(self, pose, state):
        return any(e.get("step") == pose and e.get("state") == state for e in self.process.json())

    def person_follows_the_wizard(self, mounting, poses=WIZARD, stop_after=None):
        """The person reads each prompt (the last pose still held meanwhile), turns, holds."""
        person = Person(mounting, self.write_reading)
        for index, pose in enumerate(poses):
            while not self.step(pose, "waiting"):
                person.hold(0.2)
                self.assertIsNone(self.process.process.poll(), f"calibrate exited before asking for {pose}: {self.process.stderr_lines}")
            person.hold(1.5)  # reading the prompt
            person.turn(pose)
            while not self.step(pose, "captured"):
                person.hold(0.2)
                if self.process.process.poll() is not None:
                    return person
            if stop_after == index:
                return person
        return person

    def result(self):
        self.process.wait_for(lambda p: any("matrix" in e or "error" in e for e in p.json()), timeout=20, what="the result")
        return next(e for e in self.process.json() if "matrix" in e or "error" in e)

    def hwdb_query(self, key):
        result = subprocess.run(["systemd-hwdb", "query", f"--root={self.scratch}", key], capture_output=True, text=True)
        return result.stdout.strip()

    def test_proper_and_improper_mountings_are_found_and_systemd_looks_the_entry_up(self):
        # A 90° rotation (determinant 1) on a sensor without a label: the modalias form.
        self.add_sensor()
        mounting = "0, -1, 0; 1, 0, 0; 0, 0, 1"
        self.process = self.calibrate("--write", "--root", self.scratch)
        self.process.wait_for(lambda p: any("sensor" in e for e in p.json()), what="the sensor line")
        sensor = self.process.json()[0]
        self.assertEqual((sensor["sensor"], sensor["inUse"], sensor["origin"]), ("iio:device0", "1, 0, 0; 0, 1, 0; 0, 0, 1", "identity"))
        self.person_follows_the_wizard(mounting)
        result = self.result()
        self.assertEqual(result["matrix"], mounting, result)
        self.assertTrue(result["signedPermutation"])
        self.assertFalse(result["alreadyRight"])
        self.assertEqual([e["step"] for e in self.process.json() if e.get("state") == "captured"], WIZARD)
        self.assertFalse([e for e in self.process.json() if e.get("state") == "rejected"], "the held pose is no second attempt")
        self.assertIn("sensor:modalias:acpi:BOSC0200:BOSC0200*:dmi:*svnAcme:pnSlate 10:*\n ACCEL_MOUNT_MATRIX=" + mounting, result["hwdb"])
        self.assertEqual(self.process.stop(), 0, self.process.stderr_lines)
        self.assertTrue(any("udevadm trigger left out" in line for line in self.process.stderr_lines))
        self.assertTrue(any("https://github.com/systemd/systemd" in line for line in self.process.stderr_lines))
        hwdb = os.path.join(self.scratch, "etc/udev/hwdb.d/61-sensor-local.hwdb")
        self.assertEqual(self.process.json()[-1], {"written": hwdb})
        self.assertEqual(self.hwdb_query(f"sensor:modalias:{PARENT_MODALIAS}:{DMI}"), f"ACCEL_MOUNT_MATRIX={mounting}")

    def test_an_improper_mounting_on_a_labelled_sensor_adds_the_label_form_and_replaces_its_earlier_entry(self):
        self.add_sensor(attributes={"label": "accel-display"})
        # An entry of the admin's own and an earlier one of ours for this device.
        directory = os.path.join(self.scratch, "etc/udev/hwdb.d")
        os.makedirs(directory)
        key = "sensor:accel-display:modalias:acpi:BOSC0200:BOSC0200*:dmi:*svnAcme:pnSlate 10:*"
        admins = "# the admin's\nsensor:modalias:acpi:KIOX000A*:dmi:*svnOther:*\n ACCEL_MOUNT_MATRIX=-1, 0, 0; 0, 1, 0; 0, 0, 1\n"
        with open(os.path.join(directory, "61-sensor-local.hwdb"), "w") as handle:
            handle.write(admins + f"\n# an earlier calibration\n{key}\n ACCEL_MOUNT_MATRIX=1, 0, 0; 0, 1, 0; 0, 0, 1\n")
        mounting = "0, 1, 0; 1, 0, 0; 0, 0, 1"
        self.process = self.calibrate("--write", "--root", self.scratch)
        self.person_follows_the_wizard(mounting)
        result = self.result()
        self.assertEqual(result["matrix"], mounting)
        self.assertIn(key.replace("accel-display:", "") + "\n" + key + "\n ACCEL_MOUNT_MATRIX=" + mounting, result["hwdb"])
        self.assertEqual(self.process.stop(), 0, self.process.stderr_lines)
        with open(os.path.join(directory, "61-sensor-local.hwdb")) as handle:
            text = handle.read()
        self.assertTrue(text.startswith(admins), text)
        self.assertNotIn("an earlier calibration", text)
        self.assertEqual(text.count("ACCEL_MOUNT_MATRIX"), 2, text)
        for lookup in (f"sensor:accel-display:modalias:{PARENT_MODALIAS}:{DMI}", f"sensor:modalias:{PARENT_MODALIAS}:{DMI}"):
            self.assertEqual(self.hwdb_query(lookup), f"ACCEL_MOUNT_MATRIX={mounting}", lookup)
        # The replayed fixture of a person doing the same poses gives the same result.
        replay = self.start("calibrate", "--json", "--sensor", f"replay:{FIXTURES}/person-swapped-xy.csv?speed=2")
        replay.wait_for(lambda p: p.process.poll() is not None, timeout=30, what="the replay to finish")
        replay.stop()  # reads what is still in the pipes
        final = json.loads(replay.stdout_lines[-1])
        self.assertEqual(final["matrix"], result["matrix"])
        self.assertIsNone(final["hwdb"])
        self.assertIn("not a local IIO device", final["hwdbProblem"])

    def test_a_matrix_in_use_that_is_right_writes_nothing_and_the_daemon_may_read_alongside(self):
        from daemon import Client
        mounting = "0, -1, 0; -1, 0, 0; 0, 0, 1"
        self.add_sensor(properties={"ACCEL_MOUNT_MATRIX": mounting})
        # orientd serving the same sensor, sampling for a client, all along.
        socket_path = os.path.join(self.scratch, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off", "--rate", "50")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(socket_path)
        self.addCleanup(client.close)
        client.request("subscribe", topics=["device"])
        daemon.wait_for(lambda d: d.stderr_contains("sampling starts"), what="the daemon sampling")
        self.process = self.calibrate("--write", "--root", self.scratch)
        self.person_follows_the_wizard(mounting)
        result = self.result()
        self.assertTrue(result["alreadyRight"], result)
        self.assertEqual(result["inUse"], mounting)
        self.assertEqual(self.process.stop(), 0)
        self.assertTrue(any("nothing written" in line for line in self.process.stderr_lines))
        self.assertFalse(os.path.exists(os.path.join(self.scratch, "etc")))
        self.assertEqual(client.request("get")["state"]["device"], "faceUp", "the daemon saw the same poses")
        self.assertEqual(self.bed.attribute(self.sensor, "sampling_frequency"), "50", "the daemon's rate is left alone")
        self.assertIsNone(daemon.process.poll())

    def test_on_the_running_system_it_triggers_udev_and_asks_the_daemon(self):
        # /etc/udev is a scratch directory in a mount namespace of the wizard's own, so the real
        # hwdb is untouched; udevadm writes "change" into the simulated device's uevent file.
        from daemon import Client
        self.add_sensor()
        etc_udev = os.path.join(self.scratch, "etc/udev")
        os.makedirs(etc_udev)
        socket_path = os.path.join(self.scratch, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        script = 'mount --bind "$0" /etc/udev && exec "$1" calibrate --json --write'
        self.process = Running(self.bed, "-m", "sh", "-c", script, etc_udev, ORIENTD, executable="unshare",
                               env=self.bed.env(ORIENTD_SOCKET=socket_path))
        self.running.append(self.process)
        self.process.json = lambda: [json.loads(line) for line in self.process.stdout_lines if line.startswith("{")]
        mounting = "0, -1, 0; 1, 0, 0; 0, 0, 1"
        self.person_follows_the_wizard(mounting)
        self.assertEqual(self.result()["matrix"], mounting)
        self.assertEqual(self.process.stop(), 0, self.process.stderr_lines)
        self.assertEqual(self.process.json()[-1], {"written": "/etc/udev/hwdb.d/61-sensor-local.hwdb"})
        self.assertTrue(any(f"udevadm trigger --action=change {self.sensor}: udev re-read the device" in line
                            for line in self.process.stderr_lines), self.process.stderr_lines)
        self.assertTrue(any(f"orientd on {socket_path} re-reads iio:device0" in line for line in self.process.stderr_lines),
                        self.process.stderr_lines)
        self.assertEqual(self.hwdb_query(f"sensor:modalias:{PARENT_MODALIAS}:{DMI}"), f"ACCEL_MOUNT_MATRIX={mounting}")

    def test_a_hwdb_directory_that_cannot_be_written_ends_with_its_name_and_nothing_written(self):
        self.add_sensor()
        os.makedirs(os.path.join(self.scratch, "etc/udev"))
        with open(os.path.join(self.scratch, "etc/udev/hwdb.d"), "w") as handle:
            handle.write("not a directory\n")
        self.process = self.calibrate("--write", "--root", self.scratch)
        self.person_follows_the_wizard("1, 0, 0; 0, -1, 0; 0, 0, -1")
        self.process.wait_for(lambda p: p.process.poll() is not None, what="the exit")
        self.process.stop()  # reads what is still in the pipes
        self.assertEqual(self.process.process.returncode, 73)
        error = self.process.json()[-1]["error"]
        self.assertIn(os.path.join(self.scratch, "etc/udev/hwdb.d"), error)
        self.assertIn("not a directory", error)
        self.assertEqual(os.listdir(os.path.join(self.scratch, "etc/udev")), ["hwdb.d"])

    def test_a_sensor_that_vanishes_mid_way_ends_the_wizard(self):
        self.add_sensor()
        self.process = self.calibrate()
        self.person_follows_the_wizard("1, 0, 0; 0, 1, 0; 0, 0, 1", stop_after=0)
        self.bed.remove(self.sensor)
        self.process.wait_for(lambda p: p.process.poll() is not None, what="the exit")
        self.process.stop()  # reads what is still in the pipes
        self.assertEqual(self.process.process.returncode, 1)
        self.assertIn("the sensor iio:device0 went away", self.process.json()[-1]["error"])

    def test_a_device_never_still_gives_up_saying_what_it_waited_for(self):
        self.add_sensor()
        self.process = self.calibrate("--timeout", "3")
        person = Person("1, 0, 0; 0, 1, 0; 0, 0, 1", self.write_reading, start="portrait")
        while self.process.process.poll() is None:
            person.shake(0.2)
        self.assertEqual(self.process.process.returncode, 1)
        self.process.stop()
        error = self.process.json()[-1]["error"]
        self.assertTrue(error.startswith("no still portrait pose in 3 s"), error)

    def test_a_pose_held_twice_is_rejected_with_the_reason(self):
        process = self.start("calibrate", "--json", "--sensor", f"replay:{FIXTURES}/person-portrait-twice.csv?speed=2")
        process.wait_for(lambda p: p.process.poll() is not None, timeout=30, what="the replay to finish")
        process.stop()  # reads what is still in the pipes
        lines = [json.loads(line) for line in process.stdout_lines]
        rejected = [e for e in lines if e.get("state") == "rejected"]
        self.assertEqual(len(rejected), 1, lines)
        self.assertEqual(rejected[0]["step"], "landscapeLeft")
        self.assertIn("held as it was for portrait", rejected[0]["reason"])
        self.assertEqual(lines[-1], {"error": "the readings ended while waiting for landscapeLeft"})
        self.assertEqual(process.process.returncode, 1)


class DaemonRereadsTheSensor(TestbedCase):
    def test_a_udev_change_with_a_new_matrix_turns_the_device(self):
        from daemon import Client
        path = self.bed.add_accelerometer(0, raw=(-1000, 0, 0))  # the sensor's x reads down
        directory = tempfile.mkdtemp(prefix="orientd-reread-")
        socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off", "--rate", "50")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(socket_path)
        self.addCleanup(client.close)
        client.request("subscribe", topics=["device"])
        client.next_event(lambda e: e["state"]["device"] == "landscapeLeft")
        # What `calibrate --write` brings about: hwdb gives the device a matrix, udevadm trigger
        # sends "change".
        self.bed.bed.set_property(path, "ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 1")
        self.bed.bed.uevent(path, "change")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("mount matrix changed"), what="the log")
