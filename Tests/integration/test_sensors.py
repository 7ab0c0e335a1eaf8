"""orientd's real sensor path (libudev discovery, libiio reads, buffers, hotplug, iiod) on a simulated
sysfs. Run by `make test` inside a private network namespace under umockdev-wrapper."""
import os
import subprocess
import tempfile
import time
import unittest

from daemon import Client
from testbed import G, ORIENTD, TestbedCase, orientd

ROTATED = "0, 1, 0; -1, 0, 0; 0, 0, 1"
FLIPPED = "-1, 0, 0; 0, -1, 0; 0, 0, 1"
MIRRORED = "1, 0, 0; 0, -1, 0; 0, 0, -1"


def close(a, b, tolerance=1e-3):
    return abs(a - b) <= tolerance


class Discovery(TestbedCase):
    def test_auto_skips_the_base_sensor_and_chooses_the_display_one(self):
        self.bed.add_accelerometer(0, name="lis3lv02d", properties={"ACCEL_LOCATION": "base"})
        self.bed.add_accelerometer(1, name="bmi160", properties={"ACCEL_LOCATION": "display"})
        listing = self.list_sensors()
        self.assertEqual(listing["selected"], "iio:device1")
        self.assertEqual([s["identifier"] for s in listing["sensors"]], ["iio:device0", "iio:device1"])
        self.assertEqual([s["chosen"] for s in listing["sensors"]], [False, True])
        self.assertEqual(listing["sensors"][0]["location"], "base")
        self.assertIn("keyboard base", " ".join(listing["skipped"]))

    def test_label_accel_base_is_skipped(self):
        self.bed.add_accelerometer(0, name="bmc150", attributes={"label": "accel-base"})
        self.bed.add_accelerometer(1, name="bmc150", attributes={"label": "accel-display"})
        listing = self.list_sensors()
        self.assertEqual(listing["selected"], "iio:device1")
        self.assertEqual(listing["sensors"][0]["locationOrigin"], "sysfs label")

    def test_several_display_sensors_choose_the_lowest_number_whatever_the_order(self):
        for number in (5, 2, 9):
            self.bed.add_accelerometer(number, name=f"accel{number}")
        self.assertEqual(self.list_sensors()["selected"], "iio:device2")

    def test_selection_by_name_label_and_number(self):
        self.bed.add_accelerometer(0, name="lis3lv02d", properties={"ACCEL_LOCATION": "base"})
        self.bed.add_accelerometer(1, name="bmi160", attributes={"label": "accel-display"})
        self.assertEqual(self.list_sensors("--sensor", "iio:bmi160")["selected"], "iio:device1")
        self.assertEqual(self.list_sensors("--sensor", "iio:accel-display")["selected"], "iio:device1")
        self.assertEqual(self.list_sensors("--sensor", "/dev/iio:device0")["selected"], "iio:device0")
        self.assertIsNone(self.list_sensors("--sensor", "iio:device7")["selected"])

    def test_devices_without_three_accel_axes_are_not_accelerometers(self):
        self.bed.bed.add_device("iio", "iio:device0", None, ["name", "als\n", "in_illuminance_raw", "10\n"], [])
        self.bed.add_accelerometer(1, name="bmi160", raw_channels=False, buffered=True)
        listing = self.list_sensors()
        self.assertEqual([s["identifier"] for s in listing["sensors"]], ["iio:device1"])
        self.assertTrue(listing["sensors"][0]["hasBuffer"])

    def test_nothing_found_is_said_plainly(self):
        result = orientd(self.bed, "list-sensors")
        self.assertEqual(result.returncode, 0)
        self.assertIn("No accelerometer found.", result.stdout)
        self.assertIn("auto: no accelerometer found (IIO or evdev)", result.stdout)

    def test_text_listing_names_everything(self):
        self.bed.add_accelerometer(3, name="mxc4005", attributes={"in_accel_mount_matrix": ROTATED})
        out = orientd(self.bed, "list-sensors").stdout
        for text in ("iio:device3  mxc4005  ← auto uses this one", "/sys/devices/iio:device3", "/dev/iio:device3",
                     f"{ROTATED} (sysfs in_accel_mount_matrix)", "acquisition   poll", "25 Hz (available: 12.5 25 50 100)"):
            self.assertIn(text, out)


class MountMatrices(TestbedCase):
    def matrix(self, *args):
        sensor = self.list_sensors(*args)["sensors"][0]
        return sensor["mountMatrix"], sensor["mountMatrixOrigin"], sensor["mountMatrixProblems"]

    def test_udev_property_wins_over_every_sysfs_attribute(self):
        self.bed.add_accelerometer(0, properties={"ACCEL_MOUNT_MATRIX": ROTATED},
                                   attributes={"mount_matrix": FLIPPED, "in_accel_mount_matrix": MIRRORED, "in_mount_matrix": FLIPPED})
        self.assertEqual(self.matrix()[:2], (ROTATED, "udev ACCEL_MOUNT_MATRIX"))

    def test_sysfs_attributes_in_order(self):
        self.bed.add_accelerometer(0, attributes={"mount_matrix": FLIPPED, "in_accel_mount_matrix": MIRRORED})
        self.bed.add_accelerometer(1, attributes={"in_accel_mount_matrix": MIRRORED, "in_mount_matrix": FLIPPED})
        self.bed.add_accelerometer(2, attributes={"in_mount_matrix": ROTATED})
        self.bed.add_accelerometer(3)
        sensors = self.list_sensors()["sensors"]
        self.assertEqual([(s["mountMatrix"], s["mountMatrixOrigin"]) for s in sensors], [
            (FLIPPED, "sysfs mount_matrix"), (MIRRORED, "sysfs in_accel_mount_matrix"),
            (ROTATED, "sysfs in_mount_matrix"), ("1, 0, 0; 0, 1, 0; 0, 0, 1", "identity")])

    def test_configured_matrix_overrides_all(self):
        self.bed.add_accelerometer(0, properties={"ACCEL_MOUNT_MATRIX": ROTATED})
        self.assertEqual(self.matrix("--mount-matrix", MIRRORED)[:2], (MIRRORED, "configured"))

    def test_malformed_matrix_is_reported_with_device_and_text_and_skipped(self):
        self.bed.add_accelerometer(0, properties={"ACCEL_MOUNT_MATRIX": "1, 0, 0; 0, 1"}, attributes={"mount_matrix": FLIPPED})
        matrix, origin, problems = self.matrix()
        self.assertEqual((matrix, origin), (FLIPPED, "sysfs mount_matrix"))
        self.assertEqual(len(problems), 1)
        self.assertIn("iio:device0", problems[0])
        self.assertIn('"1, 0, 0; 0, 1"', problems[0])

    def test_record_applies_the_matrix(self):
        # Sensor reads +g on its x axis; the udev matrix maps sensor x to display -y: upright portrait.
        self.bed.add_accelerometer(0, raw=(1000, 0, 0), scale="0.00981", properties={"ACCEL_MOUNT_MATRIX": ROTATED})
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 3, what="samples")
        t, x, y, z = run.samples()[-1]
        self.assertTrue(close(x, 0) and close(y, -G) and close(z, 0), run.samples()[-1])

    def test_record_keeps_every_sample_at_the_rate_while_the_device_rests(self):
        """Adaptive pacing is the daemon's (its detector decides it): a recording of a device lying
        still has every sample at the requested rate, where the rest pace would give 1.8 a second."""
        self.bed.add_accelerometer(0, raw=(0, -1000, 0), scale="0.00981")
        out = orientd(self.bed, "record", "--rate", "25", "--duration", "3")
        self.assertEqual(out.returncode, 0, out.stderr)
        times = [float(line.split(",")[0]) for line in out.stdout.splitlines()[1:]]
        self.assertGreaterEqual(len(times), 60, "25 Hz for 3 s (the rest pace would give about 6)")
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertLess(max(gaps[len(gaps) // 2:]), 0.2, "no rest-paced gaps once the device has lain still")


class Values(TestbedCase):
    def first_sample(self, **kwargs):
        self.bed.add_accelerometer(0, **kwargs)
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 2, what="samples")
        return run.samples()[-1][1:]

    def test_shared_scale(self):
        self.assertEqual(self.first_sample(raw=(100, -1000, 50), scale="0.00981"), (0.981, -9.81, 0.4905))

    def test_per_axis_scale_wins_over_shared(self):
        sample = self.first_sample(raw=(100, 100, 100), scale="0.01", per_axis_scale={"x": "0.02", "z": "0.03"})
        self.assertEqual(sample, (2.0, 1.0, 3.0))

    def test_offset_is_added_before_scaling(self):
        sample = self.first_sample(raw=(10, -990, 0), scale="0.00981", offset={"x": "-10", "y": "-10", "z": "5"})
        expected = (0.0, -9.81, 5 * 0.00981)
        self.assertTrue(all(close(a, b, 1e-4) for a, b in zip(sample, expected)), sample)

    def test_values_changed_while_running(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), scale="0.00981")
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 1 and close(r.samples()[-1][2], -G), what="portrait reading")
        self.bed.set_raw(path, -1000, 0, 0)
        run.wait_for(lambda r: close(r.samples()[-1][1], -G), what="the changed reading")

    def test_values_in_a_replaced_attribute_file_are_seen(self):
        # umockdev's own set_attribute writes a new file (a new inode), as iio-sensor-proxy's tests
        # and other projects' D-Bus fixtures do; the reader notices within its once-a-second check.
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), scale="0.00981")
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 1 and close(r.samples()[-1][2], -G), what="portrait reading")
        inode = os.stat(os.path.join(self.bed.root, path.lstrip("/"), "in_accel_x_raw")).st_ino
        for axis, value in zip("xyz", (-1000, 0, 0)):
            self.bed.bed.set_attribute(path, f"in_accel_{axis}_raw", f"{value}\n")
        self.assertNotEqual(os.stat(os.path.join(self.bed.root, path.lstrip("/"), "in_accel_x_raw")).st_ino, inode)
        run.wait_for(lambda r: close(r.samples()[-1][1], -G) and close(r.samples()[-1][2], 0), timeout=5, what="the replaced files' reading")

    def test_requested_rate_is_written_as_the_nearest_available(self):
        path = self.bed.add_accelerometer(0, sampling=("12.5", "12.5 25 50 100"))
        run = self.start("record", "--rate", "40")
        run.wait_for(lambda r: r.stderr_contains("50 Hz"), what="the rate report")
        self.assertEqual(self.bed.attribute(path, "sampling_frequency"), "50")

    def test_rate_range_form(self):
        path = self.bed.add_accelerometer(0, sampling=("1", "[1 2 200]"))
        run = self.start("record", "--rate", "26")
        run.wait_for(lambda r: r.stderr_contains("27 Hz"), what="the rate report")
        self.assertEqual(self.bed.attribute(path, "sampling_frequency"), "27")


class Hotplug(TestbedCase):
    def test_removal_is_reported_and_a_returning_sensor_is_used_within_a_second(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 2, what="samples")
        self.bed.remove(path)
        run.wait_for(lambda r: r.stderr_contains("was removed"), what="the removal report", timeout=1)
        count = len(run.samples())
        added = time.monotonic()
        path = self.bed.add_accelerometer(0, raw=(0, 0, -1000))  # add_device sends the "add" uevent
        run.wait_for(lambda r: len(r.samples()) > count and close(r.samples()[-1][3], -G), timeout=1, what="samples from the new device")
        self.assertLess(time.monotonic() - added, 1.0)

    def test_a_sensor_plugged_in_later_is_picked_up(self):
        run = self.start("record")
        run.wait_for(lambda r: r.stderr_contains("no accelerometer found (IIO or evdev)"), what="the absence report")
        self.bed.add_accelerometer(2, name="bma250")
        run.wait_for(lambda r: len(r.samples()) >= 1, timeout=1, what="samples from the new sensor")
        self.assertTrue(run.stderr_contains("iio:device2 (bma250)"))

    def test_removing_another_device_leaves_sampling_alone(self):
        self.bed.add_accelerometer(0, name="bmi160")
        other = self.bed.add_accelerometer(1, name="lis3lv02d", properties={"ACCEL_LOCATION": "base"})
        run = self.start("record")
        run.wait_for(lambda r: len(r.samples()) >= 1, what="samples")
        self.bed.remove(other)
        count = len(run.samples())
        run.wait_for(lambda r: len(r.samples()) >= count + 5, what="samples continuing")
        self.assertFalse(run.stderr_contains("removed"))


class Faults(TestbedCase):
    def test_garbage_value_is_reported_once_dropped_and_recovered(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        run = self.start("record", "--rate", "50")
        run.wait_for(lambda r: len(r.samples()) >= 1, what="samples")
        self.bed.set_attribute(path, "in_accel_y_raw", "Hello")
        run.wait_for(lambda r: r.stderr_contains('bad-value: accel_y raw "Hello"'), what="the fault report")
        count = len(run.samples())
        self.bed.set_attribute(path, "in_accel_y_raw", "-500")
        run.wait_for(lambda r: r.stderr_contains("bad-value recovered"), what="the recovery report")
        run.wait_for(lambda r: len(r.samples()) > count and close(r.samples()[-1][2], -4.905), what="good samples again")
        self.assertEqual(sum("bad-value:" in line for line in run.stderr_lines), 1)

    def test_unreadable_attribute_is_a_read_fault_with_its_errno(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        attribute = os.path.join(self.bed.root, path.lstrip("/"), "in_accel_x_raw")
        # A regular file whose every read fails with EIO, as a driver's would: reading the reader's
        # own /proc/self/mem at offset 0 (address 0 is never mapped).
        os.unlink(attribute)
        os.symlink("/proc/self/mem", attribute)
        run = self.start("record")
        run.wait_for(lambda r: r.stderr_contains("read-failed: accel_x raw: EIO"), what="the read fault")
        self.assertEqual(run.samples(), [])
        # The attribute becomes readable: a failed attribute is reopened, so samples resume.
        os.unlink(attribute)
        self.bed.set_attribute(path, "in_accel_x_raw", "0")
        run.wait_for(lambda r: r.stderr_contains("read-failed recovered"), what="the recovery")
        run.wait_for(lambda r: len(r.samples()) >= 1, what="samples after the recovery")
        self.assertEqual(sum("read-failed:" in line for line in run.stderr_lines), 1)

    def test_values_are_read_from_the_open_attribute_without_reopening(self):
        # The kernel regenerates an attribute's text on each read of the open file; orientd keeps
        # the three raw files open. A file swapped underneath (a new inode) is therefore not seen,
        # which shows the per-sample path does not reopen.
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        run = self.start("record", "--rate", "50")
        run.wait_for(lambda r: len(r.samples()) >= 1, what="samples")
        self.bed.bed.set_attribute(path, "in_accel_x_raw", "-1000\n")  # umockdev's: a new file
        self.bed.set_attribute(path, "in_accel_y_raw", "-500")  # in place, like the kernel
        run.wait_for(lambda r: close(r.samples()[-1][2], -4.905), what="the in-place change")
        self.assertTrue(close(run.samples()[-1][1], 0))

    def test_zero_or_nan_scale_drops_samples_until_fixed(self):
        for bad in ("0", "nan"):
            with self.subTest(scale=bad):
                bed_path = self.bed.add_accelerometer(0 if bad == "0" else 1, raw=(0, -1000, 0), scale=bad)
                run = self.start("record", "--sensor", "iio:device0" if bad == "0" else "iio:device1")
                run.wait_for(lambda r: r.stderr_contains("bad-scale"), what="the scale fault")
                self.assertEqual(run.samples(), [])
                self.bed.set_attribute(bed_path, "in_accel_scale", "0.00981")
                run.wait_for(lambda r: len(r.samples()) >= 1, what="samples after the fix", timeout=5)
                self.assertTrue(all(close(s[2], -G) for s in run.samples()))
                self.assertTrue(run.stderr_contains("bad-scale recovered"))


class UntrustedScale(TestbedCase):
    """Sensors whose scale is wrong or missing, as iio-sensor-proxy's test beds have them: gravity is
    measured at rest and divided out; a sensor with no direction at all stays unknown and says so."""

    def serve(self, *args):
        directory = tempfile.mkdtemp(prefix="orientd-scale-")
        self.socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", self.socket_path, "--config", "/dev/null", "--dbus", "off",
                            "--claim-linger", "0", *args)
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(self.socket_path)
        self.addCleanup(client.close)
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        return daemon, client

    def test_gravity_read_as_26_g_rotates_and_the_factor_is_logged_once(self):
        path = self.bed.add_accelerometer(0, raw=(0, -256, 0), scale="1.0")
        listing = orientd(self.bed, "list-sensors").stdout
        self.assertIn("256.0 m/s² now (26.1 g): at rest that means a wrong or missing scale; the daemon measures gravity at rest "
                      "and multiplies the readings by 9.81 m/s² over it (0.03832 for this reading)", listing)
        daemon, client = self.serve()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.bed.set_raw(path, 256, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        daemon.wait_for(lambda d: d.stderr_contains("sensor scale corrected"), what="the scale's log line")
        corrected = [line for line in daemon.stderr_lines if "sensor scale corrected" in line]
        self.assertEqual(len(corrected), 1, corrected)
        self.assertIn("gravity at rest reads 256.0 m/s² (26.1 g)", corrected[0])
        self.assertIn("multiplied by 0.03832", corrected[0])

    def test_raw_counts_without_a_scale_attribute_rotate(self):
        path = self.bed.add_accelerometer(0, raw=(0, 0, -1024), scale=None)
        daemon, client = self.serve()
        client.next_event(lambda e: e["state"]["device"] == "faceUp")
        self.bed.set_raw(path, 0, -1024, 0)
        client.next_event(lambda e: e["state"]["device"] == "portrait")

    def test_a_sensor_reading_zeros_stays_unknown_and_says_so_once(self):
        path = self.bed.add_accelerometer(0, raw=(0, 0, 0))
        daemon, client = self.serve()
        daemon.wait_for(lambda d: d.stderr_contains("no-gravity"), what="the no-gravity fault")
        # Zeros for a second are no fall: the fault says so.
        self.assertIn("reads (0.0, 0.0, 0.0) for 1.0 s, longer than any fall: no gravity", "\n".join(daemon.stderr_lines))
        state = client.request("get")["state"]
        self.assertEqual((state["device"], state["sensor"], [f["kind"] for f in state["faults"]]), ("unknown", "failed", ["no-gravity"]))
        self.bed.set_raw(path, 0, -1000, 0)
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.assertEqual(sum("no-gravity" in line and "fault" in line for line in daemon.stderr_lines), 1)


class Buffered(TestbedCase):
    def test_buffered_capture_uses_the_trigger_and_the_device_timestamps(self):
        path = self.bed.add_accelerometer(0, name="bmi160", raw=(0, -1000, 0), buffered=True, trigger="bmi160-dev0",
                                          timestamp_clock="realtime")
        self.assertEqual(self.list_sensors()["sensors"][0]["acquisition"], "buffer")
        run = self.start("record")
        run.wait_for(lambda r: r.stderr_contains("buffer mode"), what="the buffer report")
        run.wait_for(lambda r: self.bed.attribute(path, "buffer/enable") == "1", what="buffer enabled")
        self.assertEqual(self.bed.attribute(path, "trigger/current_trigger"), "bmi160-dev0")
        self.assertEqual(self.bed.attribute(path, "current_timestamp_clock"), "monotonic")
        self.assertEqual(self.bed.attribute(path, "scan_elements/in_accel_x_en"), "1")
        base = time.monotonic_ns()
        # Written in one burst: only the device's timestamps can give the 40 ms spacing.
        self.bed.write_scans(0, [(0, -1000, 0, base + k * 40_000_000) for k in range(5)] + [(1000, 0, 0, base + 200_000_000)])
        run.wait_for(lambda r: len(r.samples()) >= 6, what="buffered samples")
        samples = run.samples()
        self.assertEqual([round(s[0], 5) for s in samples], [0.0, 0.04, 0.08, 0.12, 0.16, 0.2])
        self.assertTrue(close(samples[0][2], -G) and close(samples[-1][1], G))
        self.assertEqual(run.stop(), 0)
        self.assertEqual(self.bed.attribute(path, "buffer/enable"), "0")

    def test_silent_buffer_falls_back_to_polling_in_auto_mode(self):
        self.bed.add_accelerometer(0, raw=(0, -1000, 0), buffered=True, trigger="bmi160-dev0")
        run = self.start("record")
        run.wait_for(lambda r: r.stderr_contains("polling instead"), timeout=5, what="the fallback")
        run.wait_for(lambda r: len(r.samples()) >= 2, what="polled samples")

    def test_acquisition_can_be_forced(self):
        self.bed.add_accelerometer(0, raw=(0, -1000, 0), buffered=True, trigger="bmi160-dev0")
        self.assertEqual(self.list_sensors("--acquisition", "poll")["sensors"][0]["acquisition"], "poll")
        self.bed.add_accelerometer(1, raw=(0, -1000, 0), buffered=True)  # no trigger: auto polls
        sensors = self.list_sensors()["sensors"]
        self.assertEqual(sensors[1]["acquisition"], "poll")
        self.assertEqual(self.list_sensors("--acquisition", "buffer")["sensors"][1]["acquisition"], "buffer")


class Remote(TestbedCase):
    def start_iiod(self):
        iiod = subprocess.Popen(["iiod"], env=self.bed.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (iiod.kill(), iiod.wait()))
        return iiod

    def test_ip_sensor_through_iiod_on_loopback_with_reconnection(self):
        path = self.bed.add_accelerometer(0, name="lis3dh", raw=(0, -1000, 0), attributes={"mount_matrix": FLIPPED})
        run = self.start("record", "--sensor", "ip:127.0.0.1")
        run.wait_for(lambda r: r.stderr_contains("cannot reach iiod on 127.0.0.1: ECONNREFUSED"), what="the unreachable report")
        iiod = self.start_iiod()
        run.wait_for(lambda r: len(r.samples()) >= 2, timeout=5, what="remote samples")
        self.assertTrue(run.stderr_contains("ip:127.0.0.1/iio:device0 (lis3dh)"))
        self.assertTrue(close(run.samples()[-1][2], G))  # the remote mount_matrix applied
        self.bed.set_raw(path, 1000, 0, 0)
        run.wait_for(lambda r: close(r.samples()[-1][1], -G), what="the changed remote value")
        iiod.kill()
        iiod.wait()
        run.wait_for(lambda r: r.stderr_contains("lost"), timeout=6, what="the loss report")
        count = len(run.samples())
        self.start_iiod()
        run.wait_for(lambda r: len(r.samples()) > count, timeout=5, what="samples after iiod is back")

    def test_list_remote_sensors(self):
        self.bed.add_accelerometer(0, name="lis3dh")
        self.start_iiod()
        deadline = time.monotonic() + 5
        while True:  # iiod takes a moment to listen; there is no event to wait for from outside
            result = orientd(self.bed, "list-sensors", "--json", "--sensor", "ip:127.0.0.1")
            if result.returncode == 0 or time.monotonic() > deadline:
                break
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn('"selected" : "iio:device0"', result.stdout)

    def test_unreachable_host_is_an_error_for_list_sensors(self):
        result = orientd(self.bed, "list-sensors", "--sensor", "ip:127.0.0.1")
        self.assertEqual(result.returncode, 69)
        self.assertIn("cannot reach iiod on 127.0.0.1", result.stderr)


class RecordCommand(TestbedCase):
    def test_duration_and_output_file(self):
        self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        output = os.path.join(self.bed.root, "trace.csv")
        result = orientd(self.bed, "record", "--duration", "0.5", "--output", output)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(output) as handle:
            lines = handle.read().splitlines()
        self.assertEqual(lines[0], "t,x,y,z")
        self.assertGreater(len(lines), 5)
        self.assertIn("wrote", result.stderr)
        replay = subprocess.run([ORIENTD, "replay", output], capture_output=True, text=True)
        self.assertEqual(replay.stdout.splitlines()[0].split('"orientation": ')[1], '"portrait"}')

    def test_replay_sensor_is_the_same_pipeline(self):
        trace = os.path.join(self.bed.root, "in.csv")
        with open(trace, "w") as handle:
            handle.write("t,x,y,z\n" + "".join(f"{k * 0.04:.2f},0,0,-9.81\n" for k in range(10)))
        result = orientd(self.bed, "record", "--sensor", f"replay:{trace}?speed=10")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.splitlines()), 11)

    def test_bad_sensor_specification(self):
        result = orientd(self.bed, "record", "--sensor", "usb:1")
        self.assertEqual(result.returncode, 64)
        self.assertIn('invalid sensor "usb:1"', result.stderr)


if __name__ == "__main__":
    unittest.main()
