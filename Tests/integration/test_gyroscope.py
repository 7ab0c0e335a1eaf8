"""An IMU under umockdev: accelerometer and gyroscope in one IIO device (in_accel_* and
in_anglvel_*), read through libudev and libiio. The gyroscope is read with the accelerometer only
while the device moves (counted with inotify: IN_ACCESS on in_anglvel_x_raw), its rates reach the
motion topic, and list-sensors names it."""
import math
import os
import struct
import subprocess
import tempfile
import threading
import time

from daemon import Client
from sensorproxy import BusClient, PrivateSystemBus
from test_convertible import folded
from testbed import ORIENTD, AttributeWatcher, ReadCounter, TestbedCase, orientd

ORIENTCTL = os.path.join(os.path.dirname(ORIENTD), "orientctl")

GYRO_SCALE = 0.001  # rad/s per raw unit
GYRO_RAW = (10, -20, 30)  # 0.01, −0.02, 0.03 rad/s: a bias, the device at rest


def imu_attributes(raw=GYRO_RAW, scale=GYRO_SCALE, matrix=None):
    attributes = {f"in_anglvel_{axis}_raw": str(value) for axis, value in zip("xyz", raw)}
    attributes["in_anglvel_scale"] = str(scale)
    if matrix:
        attributes["in_anglvel_mount_matrix"] = matrix
    return attributes


class ServingCase(TestbedCase):
    def serve(self, *args):
        """orientd on the testbed, its socket in a fresh directory, and a client of it."""
        directory = tempfile.mkdtemp(prefix="orientd-gyro-")
        self.socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", self.socket_path, "--config", "/dev/null", "--dbus", "off",
                            "--log-level", "debug", *args)
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(self.socket_path)
        self.addCleanup(client.close)
        return daemon, client


class Gyroscope(ServingCase):

    def counter(self, path, attribute):
        counter = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), attribute))
        self.addCleanup(counter.close)
        return counter

    def add_buffered_imu(self):
        """accel x, y, z and anglvel x, y, z as s16 scan elements (indices 0–5) and a timestamp
        (index 6), the gyroscope's channels out of the scans until the daemon enables them."""
        attributes = {"in_anglvel_scale": str(GYRO_SCALE), "scan_elements/in_timestamp_index": "6"}
        for index, axis in enumerate("xyz"):
            attributes.update({f"scan_elements/in_anglvel_{axis}_en": "0",
                               f"scan_elements/in_anglvel_{axis}_index": str(3 + index),
                               f"scan_elements/in_anglvel_{axis}_type": "le:s16/16>>0"})
        return self.bed.add_accelerometer(0, name="bmi160", raw_channels=False, buffered=True, trigger="bmi160-dev0",
                                          attributes=attributes)

    def test_list_sensors_names_the_gyroscope_of_an_imu(self):
        self.bed.add_accelerometer(0, name="mpu6050", attributes=imu_attributes())
        listing = self.list_sensors()
        self.assertIn("in_anglvel of iio:device0, read with the accelerometer (polled)", listing["sensors"][0]["gyroscope"],
                      listing)

    def test_its_rates_reach_the_motion_topic_converted_by_its_scale(self):
        self.bed.add_accelerometer(0, name="mpu6050", attributes=imu_attributes())
        daemon, client = self.serve()
        self.assertEqual(client.request("subscribe", topics=["motion"], rate=25)["rate"], 25)
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope: in_anglvel"),
                        what="the gyroscope's log line")
        # The first rate after the gyroscope's start-up: raw × scale, less the little of the bias
        # learned from that one reading (the mean while still, τ 2 s).
        event = client.next_event(lambda e: e["topic"] == "motion" and e["rotationRate"] is not None)
        for measured, raw in zip(event["rotationRate"], GYRO_RAW):
            self.assertAlmostEqual(measured, raw * GYRO_SCALE, delta=abs(raw * GYRO_SCALE) * 0.1)
        self.assertIsNotNone(event["attitude"])
        # Held still, the constant rate is learned as the bias: what is reported falls toward zero.
        later = client.next_event(lambda e: e["topic"] == "motion" and e["time"] > event["time"] + 3, timeout=15)
        self.assertLess(max(abs(v) for v in later["rotationRate"]), 0.5 * max(abs(v) for v in event["rotationRate"]))

    def test_the_gyroscope_is_read_only_while_the_device_moves(self):
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes())
        gyroscope = self.counter(path, "in_anglvel_x_raw")
        accelerometer = self.counter(path, "in_accel_y_raw")
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests"), what="rest")
        self.assertEqual(gyroscope.count(1.5), 0, "at rest the gyroscope is not read")
        accelerometer.wait_for_reads(2, "the accelerometer is still read at rest")
        self.bed.set_raw(path, 1000, 0, 0)
        gyroscope.wait_for_reads(5, "motion switches the gyroscope on")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")

    def test_a_convertibles_hinge_holds_the_display_fast_but_not_its_gyroscope(self):
        """The hinge needs every reading of the display and the base, so the display is read at its
        sampling rate at rest; its gyroscope still runs only while the device moves."""
        display, base = folded(110)
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=display, properties={"ACCEL_LOCATION": "display"},
                                          attributes=imu_attributes())
        self.bed.add_accelerometer(1, name="lis3lv02d", raw=base, attributes={"label": "accel-base"})
        gyroscope = self.counter(path, "in_anglvel_x_raw")
        accelerometer = self.counter(path, "in_accel_y_raw")
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device", "hinge", "mode"])["ok"])
        client.next_event(lambda e: e["state"]["mode"] == "laptop")
        gyroscope.wait_for_quiet(1.0, "at rest the gyroscope is switched off, hinge or not")
        self.assertGreaterEqual(accelerometer.count(1.0), 15, "the hinge holds the display at 25 Hz")
        self.bed.set_raw(path, *folded(150)[0])
        gyroscope.wait_for_reads(5, "motion switches the gyroscope on")

    def test_while_the_device_moves_the_imu_is_asked_for_50_hz(self):
        """A hand's quickest turn integrates only from about 50 Hz: the IMU is asked for it (its
        sampling_frequency) while the device moves, and for the configured 25 Hz again at rest."""
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes(),
                                          sampling=("25", "12.5 25 50 100"))
        # Watched, not polled: the device moves for well under a second each time.
        frequency = AttributeWatcher(self.bed, path, "sampling_frequency")
        self.addCleanup(frequency.close)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        frequency.wait_for("50", "50 Hz while moving")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests"), what="rest")
        frequency.wait_for("25", "25 Hz at rest")
        self.bed.set_raw(path, 1000, 0, 0)
        frequency.wait_for("50", "50 Hz on motion")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")

    def test_a_gyroscope_matrix_that_differs_is_said_and_the_accelerometers_used(self):
        self.bed.add_accelerometer(0, name="mpu6050", attributes=imu_attributes(matrix="0, 1, 0; 1, 0, 0; 0, 0, -1"))
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        daemon.wait_for(lambda d: d.stderr_contains("in_anglvel_mount_matrix (0, 1, 0; 1, 0, 0; 0, 0, -1) differs"),
                        what="the warning")

    def test_a_gyroscope_scale_that_is_not_a_positive_number_keeps_it_unread_and_says_so(self):
        """in_anglvel_scale "0" would turn every rate into nothing: the gyroscope is not read, the
        log warns naming the device and the attribute, list-sensors says why, and the state has no
        gyroscope (detection is the accelerometer's)."""
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes(scale=0))
        gyroscope = self.counter(path, "in_anglvel_x_raw")
        self.assertIn('not read: iio:device0: in_anglvel_scale "0" is not a positive number',
                      self.list_sensors()["sensors"][0]["gyroscope"])
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        daemon.wait_for(lambda d: any("warning" in line and 'in_anglvel_scale "0" is not a positive number' in line
                                      for line in d.stderr_lines), what="the warning")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.assertIsNone(client.request("get")["state"]["gyroscope"])
        self.assertEqual(gyroscope.count(0.5), 0, "moving at first (the fast pace), yet never read")

    def test_list_sensors_says_when_the_gyroscopes_matrix_differs_or_cannot_be_read(self):
        self.bed.add_accelerometer(0, name="mpu6050", attributes=imu_attributes(matrix="0, 1, 0; 1, 0, 0; 0, 0, -1"))
        self.bed.add_accelerometer(1, name="bmi160", attributes=imu_attributes(matrix="garbage; 1, 2"))
        listing = {sensor["identifier"]: sensor for sensor in self.list_sensors()["sensors"]}
        self.assertIn("iio:device0: in_anglvel_mount_matrix (0, 1, 0; 1, 0, 0; 0, 0, -1) differs from the accelerometer's",
                      " ".join(listing["iio:device0"]["mountMatrixProblems"]))
        self.assertIn('iio:device1: in_anglvel_mount_matrix ignored: invalid mount matrix "garbage; 1, 2"',
                      " ".join(listing["iio:device1"]["mountMatrixProblems"]))

    def test_a_gyroscope_value_that_is_not_a_number_shows_it_failed_until_it_reads_again(self):
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes())
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["motion"])["ok"])
        client.next_event(lambda e: e["topic"] == "motion" and e["rotationRate"] is not None)
        self.bed.set_attribute(path, "in_anglvel_y_raw", "nan")
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope cannot be read: iio:device0: in_anglvel_y_raw"),
                        what="the read failure")
        state = client.request("get")["state"]["gyroscope"]
        self.assertEqual(state["status"], "failed", state)
        self.assertIn("in_anglvel_y_raw", state["detail"])
        self.bed.set_attribute(path, "in_anglvel_y_raw", "-20")
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope read again"), what="the rates back")
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})

    def test_a_buffered_imus_gyroscope_leaves_the_scans_at_rest_and_returns_with_motion(self):
        """Buffered, the gyroscope's channels are enabled in the scans only while the device moves:
        at rest the buffer is made anew without them (the chip may then switch it off)."""
        path = self.add_buffered_imu()
        enabled = AttributeWatcher(self.bed, path, "scan_elements/in_anglvel_x_en")
        self.addCleanup(enabled.close)
        reading, stop, moving = [0, -1000, 0], threading.Event(), threading.Event()

        def sensor():
            """A 50 Hz chip: a scan every 20 ms while the buffer runs, with the rates while they are
            in it (the simulated sensor's pace, not a synchronisation)."""
            turn = 0
            while not stop.wait(0.02):
                turn += 1
                now = ([1000, 0, 0] if turn % 2 else [700, -700, 0]) if moving.is_set() else reading
                if self.bed.attribute(path, "buffer/enable") != "1":
                    continue
                with_rates = self.bed.attribute(path, "scan_elements/in_anglvel_x_en") == "1"
                scan = (struct.pack("<hhhhhh4xq", *now, *GYRO_RAW, time.monotonic_ns()) if with_rates
                        else struct.pack("<hhh2xq", *now, time.monotonic_ns()))
                try:
                    fd = os.open(self.bed.fifos[0], os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # the buffer is being made anew: no reader for an instant
                    continue
                try:
                    os.write(fd, scan)
                except OSError:
                    pass
                finally:
                    os.close(fd)

        writer = threading.Thread(target=sensor, daemon=True)
        writer.start()
        self.addCleanup(writer.join)
        self.addCleanup(stop.set)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        enabled.wait_for("1", "in the scans while the device may move (the start)")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests"), what="rest")
        enabled.wait_for("0", "out of the scans at rest")
        # Turning on and on (a rest batch is up to a second long: a turn that ends within one is
        # seen only after it, with no need of the gyroscope), then still in landscape.
        reading[:] = [1000, 0, 0]
        moving.set()
        enabled.wait_for("1", "back in the scans on motion")
        moving.clear()
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")

    def test_record_writes_the_gyroscope_form(self):
        self.bed.add_accelerometer(0, name="mpu6050", attributes=imu_attributes())
        result = orientd(self.bed, "record", "--duration", "1", "--output", "-")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0], "t,x,y,z,gx,gy,gz")
        rows = [line.split(",") for line in lines[1:]]
        with_rates = [row for row in rows if len(row) == 7]
        self.assertGreater(len(with_rates), 10, "25 Hz for a second, less the gyroscope's start-up")
        starting = len(rows) - len(with_rates)
        # Its start-up (0.08 s) discarded: the readings at 0 and 0.04 s carry no rate.
        self.assertGreaterEqual(starting, 2, "the gyroscope's first 0.08 s are discarded")
        self.assertTrue(all(len(row) == 4 for row in rows[:starting]), "only the first lines lack it")
        self.assertEqual([float(v) for v in with_rates[-1][4:]], [raw * GYRO_SCALE for raw in GYRO_RAW])

    def test_a_buffered_imu_carries_its_rates_in_the_scans(self):
        """accel x, y, z and anglvel x, y, z as s16 scan elements (indices 0–5) and a timestamp
        (index 6): 12 bytes, 4 of padding, 8 of timestamp while the gyroscope is in the scans."""
        path = self.add_buffered_imu()
        listed = self.list_sensors()["sensors"][0]
        self.assertEqual(listed["acquisition"], "buffer")
        self.assertIn("in the buffer", listed["gyroscope"])
        run = self.start("record")
        run.wait_for(lambda r: self.bed.attribute(path, "scan_elements/in_anglvel_x_en") == "1"
                     and self.bed.attribute(path, "buffer/enable") == "1", what="the gyroscope in the scans")
        fifo = self.bed.fifos[0]

        def scan_written_then_rates_read(run):
            # The sensor delivers a scan each time the output is looked at, until one carries rates.
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # the buffer is being made anew: no reader for an instant
                return False
            try:
                os.write(fd, struct.pack("<hhhhhh4xq", 0, -1000, 0, *GYRO_RAW, time.monotonic_ns()))
            finally:
                os.close(fd)
            return any(line.count(",") == 6 for line in run.stdout_lines[1:])

        run.wait_for(scan_written_then_rates_read, what="a sample with the gyroscope's rates")
        self.assertEqual(run.stdout_lines[0], "t,x,y,z,gx,gy,gz")
        row = next(line for line in run.stdout_lines[1:] if line.count(",") == 6).split(",")
        self.assertEqual([float(v) for v in row[4:]], [raw * GYRO_SCALE for raw in GYRO_RAW])
        self.assertEqual(run.stop(), 0)

    def test_a_steady_turn_repeats_one_rate_and_is_no_fault(self):
        """Turned at a steady 1 rad/s for 1.5 s, the accelerometer turning with it: the gyroscope
        reads one value the whole turn, which agrees with the turn the accelerometer sees (86°), so
        it is never faulted, and motion events carry its rate all along, never null."""
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes(raw=(0, 0, 0)))
        # Logging at info: nothing reads its log while the turn is written, and a debug line a sample
        # would fill the pipe and stop its sampling.
        daemon, client = self.serve("--log-level", "info")
        self.assertTrue(client.request("subscribe", topics=["device", "motion"], rate=25)["ok"])
        client.next_event(lambda e: e["topic"] == "device" and e["state"]["device"] == "portrait")
        client.next_event(lambda e: e["topic"] == "motion" and e["rotationRate"] is not None)
        began = time.monotonic()
        self.bed.set_attribute(path, "in_anglvel_z_raw", str(round(1.0 / GYRO_SCALE)))
        while (elapsed := time.monotonic() - began) < 1.5:
            self.bed.set_raw(path, round(-1000 * math.sin(elapsed)), round(-1000 * math.cos(elapsed)), 0)
            time.sleep(0.02)  # the turn's pace: a reading written every 20 ms
        self.bed.set_raw(path, round(-1000 * math.sin(1.5)), round(-1000 * math.cos(1.5)), 0)
        # Asked while the rate still reads 1 rad/s, half a second after a frozen check would have
        # judged it (the same value for a second through a 57° turn).
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})
        self.bed.set_attribute(path, "in_anglvel_z_raw", "0")
        # Every event from the turn's start to the first rate after its end.
        events = [client.next_event()]
        while not (events[-1]["topic"] == "motion" and events[-1]["rotationRate"] is not None
                   and abs(events[-1]["rotationRate"][2]) < 0.1):
            events.append(client.next_event())
        self.assertIn("landscapeLeft", [e["state"]["device"] for e in events if e["topic"] == "device"])
        rates = [e["rotationRate"] for e in events if e["topic"] == "motion"]
        self.assertNotIn(None, rates, "a motion event without the gyroscope's rate during the turn")
        self.assertTrue(any(abs(rate[2] - 1.0) < 0.1 for rate in rates), rates)
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})

    def test_a_frozen_gyroscope_falls_back_to_the_accelerometer_visibly(self):
        """in_anglvel holds one value while the accelerometer turns a quarter: evidence no working
        gyroscope gives. The daemon says so, shows it in the state, and decides the turn alone."""
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes())
        gyroscope = self.counter(path, "in_anglvel_x_raw")
        daemon, client = self.serve()
        # A motion subscriber keeps the gyroscope read: over a second of one value, then the turn.
        self.assertTrue(client.request("subscribe", topics=["device", "motion"])["ok"])
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})
        gyroscope.wait_for_reads(30, "the gyroscope read for over a second (25 Hz)")
        self.bed.set_raw(path, 1000, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope fault: frozen"), what="the fault in the log")
        state = client.request("get")["state"]
        self.assertEqual(state["gyroscope"]["status"], "failed")
        # A quarter turn, give or take the little the held bias (0.037 rad/s) turns gravity meanwhile.
        self.assertRegex(state["gyroscope"]["detail"], r"while the accelerometer turned (8[4-9]|9[0-6])° beyond what that rate")
        self.assertEqual(state["sensor"], "active", "the accelerometer still works")
        shown = subprocess.run([ORIENTCTL, "get", "--socket", self.socket_path], capture_output=True, text=True, timeout=10)
        self.assertIn("gyroscope: failed (frozen at", shown.stdout)


class GyroscopeOfItsOwn(ServingCase):
    """An HID sensor hub's gyro_3d beside its accel_3d: two IIO devices."""

    def add_gyroscope(self, number=1, raw=GYRO_RAW, matrix=None, scale=GYRO_SCALE, location=None):
        attributes = ["name", "gyro_3d\n", "in_anglvel_scale", f"{scale}\n"]
        if location:
            attributes += ["location", f"{location}\n"]
        for axis, value in zip("xyz", raw):
            attributes += [f"in_anglvel_{axis}_raw", f"{value}\n"]
        if matrix:
            attributes += ["in_anglvel_mount_matrix", f"{matrix}\n"]
        return self.bed.bed.add_device("iio", f"iio:device{number}", None, attributes,
                                       ["DEVNAME", f"/dev/iio:device{number}"])

    def test_its_rates_join_the_accelerometers_samples_in_its_own_frame(self):
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        self.add_gyroscope(matrix="0, -1, 0; 1, 0, 0; 0, 0, 1")
        daemon, client = self.serve()
        self.assertEqual(client.request("subscribe", topics=["motion"], rate=25)["rate"], 25)
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope: iio:device1 (gyro_3d)"), what="the gyroscope found")
        event = client.next_event(lambda e: e["topic"] == "motion" and e["rotationRate"] is not None)
        # Its matrix turns (0.01, −0.02, 0.03) into (0.02, 0.01, 0.03), less the little bias learned.
        for measured, expected in zip(event["rotationRate"], (0.02, 0.01, 0.03)):
            self.assertAlmostEqual(measured, expected, delta=abs(expected) * 0.1)
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})

    def test_a_frozen_one_falls_back_to_the_accelerometer_and_the_log_names_it(self):
        """The fault's log line names the gyroscope's own device, not the accelerometer's."""
        accelerometer = self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        reads = ReadCounter(os.path.join(self.bed.root, self.add_gyroscope().lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(reads.close)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device", "motion"])["ok"])
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        reads.wait_for_reads(60, "the gyroscope read for over a second (50 Hz)")
        self.bed.set_raw(accelerometer, 1000, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope fault: frozen"), what="the fault in the log")
        line = next(line for line in daemon.stderr_lines if "gyroscope fault: frozen" in line)
        self.assertIn("sensor.device=iio:device1 (gyro_3d)", line)
        self.assertEqual(client.request("get")["state"]["gyroscope"]["status"], "failed")

    def test_one_whose_scale_is_not_a_number_is_not_read_and_the_log_says_why(self):
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        path = self.add_gyroscope(scale="nan")
        reads = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(reads.close)
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("iio:device1  gyro_3d: gyroscope  (not read)", text)
        self.assertIn('warning       iio:device1: in_anglvel_scale "nan" is not a positive number', text)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device", "motion"])["ok"])
        daemon.wait_for(lambda d: any("warning" in line and "no gyroscope of its own: iio:device1: in_anglvel_scale"
                                      in line for line in d.stderr_lines), what="the warning")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.assertIsNone(client.request("get")["state"]["gyroscope"])
        self.assertEqual(reads.count(0.5), 0, "a motion subscriber, yet never read")

    def test_a_matrix_that_cannot_be_parsed_is_said_and_the_next_one_used(self):
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        self.add_gyroscope(matrix="garbage; 1, 2")
        gyroscope = self.list_sensors()["gyroscopes"][0]
        self.assertEqual(gyroscope["mountMatrixOrigin"], "identity")
        self.assertIn('iio:device1: sysfs in_anglvel_mount_matrix ignored: invalid mount matrix "garbage; 1, 2"',
                      gyroscope["problems"][0])
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["motion"])["ok"])
        daemon.wait_for(lambda d: any("warning" in line and "sysfs in_anglvel_mount_matrix ignored" in line
                                      for line in d.stderr_lines), what="the warning")

    def test_one_that_cannot_be_read_shows_failed_until_it_reads_again(self):
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        path = self.add_gyroscope()
        attribute = os.path.join(self.bed.root, path.lstrip("/"), "in_anglvel_y_raw")
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["motion"])["ok"])
        client.next_event(lambda e: e["topic"] == "motion" and e["rotationRate"] is not None)
        os.rename(attribute, attribute + ".gone")
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope cannot be read"), what="the read failure")
        state = client.request("get")["state"]["gyroscope"]
        self.assertEqual(state["status"], "failed", state)
        self.assertIn("cannot be read: ", state["detail"])
        os.rename(attribute + ".gone", attribute)
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope read again"), what="the rates back")
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"})

    def test_one_in_a_convertibles_base_is_not_read_but_one_in_the_display_is(self):
        """In the base it turns with the base: its rates are the display's only while the hinge holds
        still, and in a frame turned by the hinge angle."""
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        self.add_gyroscope(location="base")
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("iio:device1  gyro_3d: gyroscope  (not read)", text)
        self.assertIn("warning       iio:device1: in the base (sysfs location)", text)
        self.add_gyroscope(number=2, location="lid")
        self.assertIn("iio:device2  gyro_3d: gyroscope  ← read with the accelerometer while the device moves",
                      orientd(self.bed, "list-sensors").stdout)

    def test_list_sensors_shows_it(self):
        self.bed.add_accelerometer(0, name="accel_3d")
        self.add_gyroscope(matrix="0, -1, 0; 1, 0, 0; 0, 0, 1")
        gyroscope = self.list_sensors()["gyroscopes"][0]
        self.assertEqual((gyroscope["deviceID"], gyroscope["name"]), ("iio:device1", "gyro_3d"))
        self.assertEqual(gyroscope["mountMatrixOrigin"], "sysfs in_anglvel_mount_matrix")
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("iio:device1  gyro_3d: gyroscope  ← read with the accelerometer while the device moves", text)
        self.assertIn("reading       polled: in_anglvel_x_raw, _y_raw, _z_raw", text)

    def test_it_is_polled_at_50_hz_while_it_runs(self):
        """A hand's quickest turn integrates only from about 50 Hz: it is polled at 50 Hz while it
        runs, with the accelerometer, though their configured rate is 25 Hz. A motion subscriber at
        25 Hz keeps both running here, as a moving device would."""
        self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        gyroscope_path = self.add_gyroscope()
        reads = ReadCounter(os.path.join(self.bed.root, gyroscope_path.lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(reads.close)
        daemon, client = self.serve()
        self.assertEqual(client.request("subscribe", topics=["motion"], rate=25)["rate"], 25)
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope: iio:device1 (gyro_3d)"), what="the gyroscope found")
        reads.wait_for_reads(3, "the gyroscope is read")
        count = reads.count(1.0)
        self.assertGreater(count, 38, f"{count} reads in a second: 50 Hz (25 Hz would read 25 times)")

    def test_it_is_read_only_while_the_device_moves_and_its_removal_is_said(self):
        accelerometer = self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        gyroscope_path = self.add_gyroscope()
        reads = ReadCounter(os.path.join(self.bed.root, gyroscope_path.lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(reads.close)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests"), what="rest")
        self.assertEqual(reads.count(1.5), 0, "at rest the gyroscope is not read")
        self.bed.set_raw(accelerometer, 1000, 0, 0)
        reads.wait_for_reads(3, "motion switches the gyroscope on")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        self.bed.remove(gyroscope_path)
        daemon.wait_for(lambda d: d.stderr_contains("no gyroscope of its own: iio:device1 (gyro_3d) was removed"),
                        what="the removal")

    def add_hid_gyroscope(self, number=1, buffer_node=True):
        """An HID hub's gyro_3d: its three channels scan elements paced by its trigger; without
        `buffer_node` its /dev node is missing, so its buffer cannot be opened (as one the service's
        user may not open)."""
        attributes = ["name", "gyro_3d\n", "in_anglvel_scale", f"{GYRO_SCALE}\n", "in_anglvel_hysteresis", "0.5\n",
                      "buffer/length", "1\n", "buffer/enable", "0\n", "trigger/current_trigger", "\n",
                      "scan_elements/in_timestamp_en", "0\n", "scan_elements/in_timestamp_index", "3\n",
                      "scan_elements/in_timestamp_type", "le:s64/64>>0\n"]
        for index, (axis, value) in enumerate(zip("xyz", GYRO_RAW)):
            attributes += [f"in_anglvel_{axis}_raw", f"{value}\n", f"scan_elements/in_anglvel_{axis}_en", "0\n",
                           f"scan_elements/in_anglvel_{axis}_index", f"{index}\n",
                           f"scan_elements/in_anglvel_{axis}_type", "le:s16/16>>0\n"]
        path = self.bed.bed.add_device("iio", f"iio:device{number}", None, attributes,
                                       ["DEVNAME", f"/dev/iio:device{number}"])
        if buffer_node:
            self.bed.make_buffer_node(number)
        self.bed.bed.add_device("iio", f"trigger{number}", None, ["name", f"gyro_3d-dev{number}\n"], [])
        return path

    def test_a_gyroscope_whose_buffer_cannot_be_opened_takes_nothing_down(self):
        """Its buffer refused (the real kernel's EACCES for a node the rule gave no group; here no
        node at all): said once, the gyroscope unavailable, and the daemon goes on serving turns from
        the accelerometer alone. Before, the loss was handled inside the lock that opened it, which
        trapped (Recursive call to lock Mutex) and took the daemon down at every claim."""
        accelerometer = self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        self.add_hid_gyroscope(buffer_node=False)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device", "motion"], rate=25)["ok"])
        daemon.wait_for(lambda d: d.stderr_contains("iio:device1 (gyro_3d) lost:"), what="the buffer refused")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.bed.set_raw(accelerometer, 1000, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        motion = client.next_event(lambda e: e["topic"] == "motion")
        self.assertIsNone(motion["rotationRate"])
        self.assertIsNone(daemon.process.poll(), "orientd is still running")
        self.assertFalse(daemon.stderr_contains("Fatal error"), daemon.stderr_lines[-20:])

    def test_an_hid_gyroscope_is_read_from_its_buffer_not_its_raw_attributes(self):
        """An HID hub answers each raw read with a request to the hub: its gyro_3d, whose three
        channels are scan elements with a trigger, is read from the buffer while the device moves,
        and the buffer is switched off again at rest."""
        accelerometer = self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -1000, 0))
        path = self.add_hid_gyroscope()
        raw_reads = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(raw_reads.close)
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["device", "motion"], rate=25)["ok"])
        daemon.wait_for(lambda d: d.stderr_contains("gyroscope: iio:device1 (gyro_3d)"), what="the gyroscope found")
        daemon.wait_for(lambda d: self.bed.attribute(path, "buffer/enable") == "1", what="its buffer enabled")
        self.assertEqual(self.bed.attribute(path, "trigger/current_trigger"), "gyro_3d-dev1")
        # Its change sensitivity cleared while it runs: a steady turn repeats one rate, which a hub
        # with one would report once and then never again.
        self.assertEqual(self.bed.attribute(path, "in_anglvel_hysteresis"), "0.0")
        self.assertIn("reading       buffer in_anglvel_x, _y, _z, trigger gyro_3d-dev1",
                      orientd(self.bed, "list-sensors").stdout)
        turned = (100, -200, 300)

        def scan_written():
            try:
                fd = os.open(self.bed.fifos[1], os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader for an instant
                return
            try:
                os.write(fd, struct.pack("<hhhhq", *turned, 0, time.monotonic_ns()))
            finally:
                os.close(fd)

        def turning(event):
            scan_written()
            rate = event.get("rotationRate") if event["topic"] == "motion" else None
            return rate is not None and abs(rate[2] - 0.3) < 0.03
        event = client.next_event(turning)
        for measured, expected in zip(event["rotationRate"], (0.1, -0.2, 0.3)):
            self.assertAlmostEqual(measured, expected, delta=0.03)
        self.assertEqual(raw_reads.count(0.5), 0, "its raw attributes are not read")
        # Without the motion subscriber the device comes to rest, and the buffer is switched off.
        self.assertTrue(client.request("unsubscribe", topics=["motion"])["ok"])
        self.bed.set_raw(accelerometer, 0, -1000, 1)
        daemon.wait_for(lambda d: self.bed.attribute(path, "buffer/enable") == "0", what="its buffer off at rest")
        self.assertEqual(self.bed.attribute(path, "in_anglvel_hysteresis"), "0.5", "the hub's own sensitivity back")


class GyroscopeOnTheBus(TestbedCase):
    """An IMU turned smoothly, its gyroscope's rates consistent with its accelerometer's: the turn
    reaches net.hadess.SensorProxy's claimant through the fused path, and the gyroscope stays
    working (no evidence against it)."""

    def test_a_smooth_turn_with_its_rates_reaches_a_claimant(self):
        bus = PrivateSystemBus()
        self.addCleanup(bus.stop)
        path = self.bed.add_accelerometer(0, name="mpu6050", raw=(0, -1000, 0), attributes=imu_attributes(raw=(0, 0, 0)))
        daemon = self.start("serve", "--socket", os.path.join(bus.directory, "orientd.sock"), "--config", "/dev/null",
                            "--dbus", "on", "--claim-linger", "0", "--no-dbus-polkit", "--log-level", "debug",
                            env=bus.env(self.bed.env()))
        daemon.wait_for(lambda d: d.stderr_contains("serving net.hadess.SensorProxy"), what="the bus name")
        client = BusClient(bus)
        self.addCleanup(client.close)
        client.call("ClaimAccelerometer")
        client.wait_for(lambda c: "normal" in c.orientations(), what="normal")
        stop = threading.Event()

        def turn():
            """A quarter turn counter-clockwise over 0.6 s, written at 50 Hz: the accelerometer's
            reading and the gyroscope's rate about z (raw units of 0.001 rad/s)."""
            start = time.monotonic()
            while not stop.wait(0.02):
                s = min(1.0, (time.monotonic() - start) / 0.6)
                theta = (s ** 3 * (10 - 15 * s + 6 * s * s)) * math.pi / 2
                rate = 30 * s * s * (1 - s) ** 2 * (math.pi / 2) / 0.6
                self.bed.set_attribute(path, "in_anglvel_z_raw", str(round(rate / GYRO_SCALE)))
                self.bed.set_raw(path, round(-1000 * math.sin(theta)), round(-1000 * math.cos(theta)), 0)
                if s >= 1:
                    return

        reads = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), "in_anglvel_x_raw"))
        self.addCleanup(reads.close)
        writer = threading.Thread(target=turn, daemon=True)
        writer.start()
        self.addCleanup(lambda: (stop.set(), writer.join()))
        reads.wait_for_reads(5, "the gyroscope switched on and read during the turn")
        # (−1000, 0, 0) read gravity-pointing is the left edge down: iio-sensor-proxy's right-up.
        client.wait_for(lambda c: "right-up" in c.orientations(), what="right-up")
        self.assertEqual(client.orientations(), ["normal", "right-up"])
        state = Client(os.path.join(bus.directory, "orientd.sock")).request("get")["state"]
        self.assertEqual(state["gyroscope"], {"status": "working"})
        self.assertFalse(daemon.stderr_contains("gyroscope fault"))
