"""Adaptive pacing under umockdev: at rest the daemon reads the accelerometer at the rest rate (at
the held rate while it sways), the first reading that moves brings the sampling rate back, and
--rest-rate 0 reads at the rate always. How often the simulated attribute is read is counted with inotify (IN_ACCESS)."""
import os
import select
import subprocess
import tempfile
import threading
import time

from daemon import Client
from testbed import IN_MODIFY, ORIENTD, AttributeWatcher, ReadCounter, TestbedCase, inotify_watch, motion_event, orientd

ORIENTCTL = os.path.join(os.path.dirname(ORIENTD), "orientctl")


class Pace(TestbedCase):
    def serve(self, *args, pass_fds=()):
        directory = tempfile.mkdtemp(prefix="orientd-pace-")
        socket_path = self.socket_path = os.path.join(directory, "orientd.sock")
        # --base-sensor auto, the default: a device with no base sensor rests like any other.
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off",
                            "--log-level", "debug", *args, pass_fds=pass_fds)
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(socket_path)
        self.addCleanup(client.close)
        self.assertTrue(client.request("subscribe", topics=["device"])["ok"])
        return daemon, client

    def counter(self, path):
        counter = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), "in_accel_y_raw"))
        self.addCleanup(counter.close)
        return counter

    def test_at_rest_the_rest_rate_and_motion_brings_the_rate_back(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        counter = self.counter(path)
        daemon, client = self.serve()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="rest")
        self.assertEqual(client.request("get")["state"]["rate"], 1.8, "the rate in force, for clients")
        shown = subprocess.run([ORIENTCTL, "get", "--socket", self.socket_path], capture_output=True, text=True, timeout=10)
        self.assertIn("sensor: active (iio:device0), read at 1.8 Hz", shown.stdout, shown.stderr)
        reads = counter.count(2.0)
        self.assertLessEqual(reads, 7, "1.8 Hz at rest (25 Hz would read about 50 times)")
        self.assertGreaterEqual(reads, 2)
        # A turn: the first reading that moves brings the rate back, and the turn is decided.
        self.bed.set_raw(path, 1000, 0, 0)
        daemon.wait_for(lambda d: d.stderr_contains("the device moves: read at the sampling rate"), what="motion")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        self.assertEqual(sum("the device moves" in line for line in daemon.stderr_lines), 1)
        self.assertIn(client.request("get")["state"]["rate"], (25, 1.8), "the sampling rate, or rest again already")

    def test_held_in_a_hand_it_rests_at_4_hz_and_lying_still_at_1_9_hz(self):
        """A device that sways at rest (a hand: here 0.8° either way, 14 counts on z, rewritten every
        40 ms as a 25 Hz sensor does) is read at the held rate; once the sway stops (put down at
        the middle) it lies still after 2 s and is read at the rest rate."""
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        counter = self.counter(path)
        stop = threading.Event()

        def sensor():
            step = 0
            while not stop.wait(0.04):
                step += 1
                self.bed.set_attribute(path, "in_accel_z_raw", "14" if step % 2 else "0")

        writer = threading.Thread(target=sensor, daemon=True)
        writer.start()
        self.addCleanup(lambda: (stop.set(), writer.join()))
        daemon, client = self.serve()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests, held (it sways): read at 4 Hz"), what="held rest")
        self.assertEqual(client.request("get")["state"]["rate"], 4)
        reads = counter.count(2.0)
        self.assertGreaterEqual(reads, 6, "4 Hz while held (1.8 Hz would read 3 or 4 times)")
        self.assertLessEqual(reads, 11, "4 Hz while held (25 Hz would read about 50 times)")
        stop.set()
        writer.join()
        self.bed.set_attribute(path, "in_accel_z_raw", "7")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="lying still")
        self.assertEqual(client.request("get")["state"]["rate"], 1.8)
        self.assertLessEqual(counter.count(2.0), 7, "1.8 Hz lying still")
        self.assertFalse(daemon.stderr_contains("the device moves"), "sway is rest, not motion")

    def test_rest_rate_0_reads_at_the_rate_always(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        counter = self.counter(path)
        daemon, client = self.serve("--rest-rate", "0")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        self.assertGreaterEqual(counter.count(1.0), 12, "25 Hz")
        self.assertEqual(client.request("get")["state"]["rate"], 25)
        self.assertFalse(daemon.stderr_contains("the device rests"))

    def test_list_sensors_says_the_pacing_and_the_hardware_that_could_help(self):
        self.bed.add_accelerometer(0, attributes={"events/in_accel_mag_rising_en": "0", "buffer/hwfifo_watermark_max": "32"})
        (sensor,) = self.list_sensors()["sensors"]
        self.assertEqual(sensor["powerFeatures"], ["events/in_accel_mag_rising_en", "buffer/hwfifo_watermark_max"])
        self.bed.add_accelerometer(1, buffered=True, trigger="bmi160-dev1")
        self.bed.add_accelerometer(2)
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("pacing        adaptive: the sampling rate while the device moves; at rest asleep on the motion interrupt "
                      "(events/in_accel_mag_rising_en)", text)
        self.assertIn("pacing        adaptive polling: the sampling rate while the device moves", text)
        self.assertIn("pacing        adaptive: one sample per read while the device moves; at rest the buffer hands over batches of "
                      "[sensor] rest-rate's interval (buffer/watermark)", text)

    def test_at_rest_nothing_but_the_poll_wakes_the_daemon(self):
        """No periodic timer besides the poll: libdispatch's 1 Hz workqueue monitor (started by the
        first global-queue job), a fixed-period silence check, and then a silence check at the
        detector's deadline (which every sample moves) each woke the daemon at rest for nothing."""
        self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        self.bed.add_light(1, attributes={"in_illuminance_input": "120"})  # claimed too, as a desktop's brightness does
        daemon, client = self.serve()
        self.assertTrue(client.request("subscribe", topics=["light"])["ok"])
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests"), what="rest")

        def switches():
            counts = {}
            for task in os.listdir(f"/proc/{daemon.process.pid}/task"):
                try:
                    with open(f"/proc/{daemon.process.pid}/task/{task}/comm") as handle:
                        name = handle.read().strip()
                    with open(f"/proc/{daemon.process.pid}/task/{task}/status") as handle:
                        fields = dict(line.split(":\t") for line in handle.read().splitlines() if ":\t" in line)
                    # A thread that sleeps and is woken blocks again once: one voluntary switch per
                    # wake-up. Involuntary ones are preemptions of a thread already awake (by the
                    # other tests' load on two cores), no wake-up: counting them failed 1 run in 10.
                    counts[(task, name)] = int(fields["voluntary_ctxt_switches"])
                except FileNotFoundError:
                    pass  # a thread that ended meanwhile
            return counts
        before = switches()
        time.sleep(6)  # a measurement window, not a synchronisation
        after = switches()
        woken = {key[1]: after[key] - before.get(key, 0) for key in after if after[key] - before.get(key, 0) > 0}
        others = {name: count for name, count in woken.items() if name not in ("orientd-poll", "orientd-light")}
        # At most the state's new rate going out (to the client, and systemd's status a second later);
        # a silence check at the detector's deadline woke the event loop every 1.5 s, and a dispatch
        # timer reading the light woke libdispatch's threads three times per reading.
        self.assertLessEqual(sum(others.values()), 2, f"threads woken at rest besides the poll and the light's: {woken}")
        self.assertLessEqual(woken.get("orientd-poll", 0), 6 * 2 + 2, f"the poll at 1.8 Hz: {woken}")
        self.assertLessEqual(woken.get("orientd-light", 0), 6 * 2 + 2, f"the light every 0.5 s: {woken}")

    def test_buffered_at_rest_the_buffer_hands_over_batches_and_motion_brings_single_samples_back(self):
        """At rest a buffered sensor is read in batches of the rest interval (libiio sets
        buffer/watermark to the batch, so the kernel and a hardware FIFO keep the samples between)."""
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), buffered=True, trigger="bmi160-dev0", timestamp_clock="realtime",
                                          attributes={"buffer/watermark": "1"})
        pose = [(0, -1000, 0)]
        stop = threading.Event()

        def sensor():  # the trigger at 25 Hz: a scan every 40 ms, stamped with CLOCK_MONOTONIC
            k = 0
            while not stop.wait(0.04):
                x, y, z = pose[0]
                try:
                    self.bed.write_scans(0, [(x + k % 2, y, z, time.monotonic_ns())])  # a count of noise
                except OSError:
                    pass  # no reader while the daemon replaces its buffer: the sample is lost, as from a full FIFO
                k += 1
        writer = threading.Thread(target=sensor, daemon=True)
        self.addCleanup(lambda: (stop.set(), writer.join()))
        daemon, client = self.serve("--acquisition", "buffer")
        writer.start()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="rest")
        daemon.wait_for(lambda d: self.bed.attribute(path, "buffer/watermark") == "13", what="a batch of 1/1.8 s at 25 Hz")
        pose[0] = (1000, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight", timeout=5)
        daemon.wait_for(lambda d: d.stderr_contains("the device moves: read at the sampling rate"), what="motion")
        self.assertFalse(daemon.stderr_contains("sensor fault"), [line for line in daemon.stderr_lines if "sensor fault" in line])


    def test_an_hid_hub_is_given_its_change_sensitivity_at_rest_and_its_quiet_holds_the_orientation(self):
        """An HID hub's accel_3d (raw in 0.01 g) reports every 100 ms, or with a change sensitivity
        only what moved by it (the kernel's in_accel_hysteresis, in g): at rest orientd sets it, so a
        still device sends nothing and wakes nobody, and the quiet holds the orientation (no silence,
        no fault); a turn is reported, cleared again, and heard. The buffer is made once for all of
        it: made anew, a hub is powered off and on, and its first report waits two intervals."""
        path = self.bed.add_accelerometer(0, name="accel_3d", raw=(0, -100, 0), scale="0.0980665", buffered=True,
                                          trigger="accel_3d-dev0", sampling=None,
                                          attributes={"in_accel_hysteresis": "0", "in_accel_sampling_frequency": "10"})
        enables = inotify_watch(os.path.join(self.bed.root, path.lstrip("/"), "buffer/enable"), IN_MODIFY)
        self.addCleanup(os.close, enables)
        pose, sent, stop = [(0, -100, 0)], [0], threading.Event()

        def hub():
            """Every report interval: the values, with a count of noise, unless within the sensitivity
            of the last report sent."""
            last, k = None, 0
            while not stop.wait(0.1):
                k += 1
                value = (pose[0][0] + k % 2, pose[0][1], pose[0][2])
                sensitivity = float(self.bed.attribute(path, "in_accel_hysteresis") or 0) * 100  # counts
                if last and sensitivity > 0 and max(abs(a - b) for a, b in zip(value, last)) < sensitivity:
                    continue
                try:
                    self.bed.write_scans(0, [(*value, time.monotonic_ns())])
                except OSError:
                    continue  # no reader for an instant
                last = value
                sent[0] += 1
        writer = threading.Thread(target=hub, daemon=True)
        self.addCleanup(lambda: (stop.set(), writer.join()))
        daemon, client = self.serve("--acquisition", "buffer")
        writer.start()
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        watcher = AttributeWatcher(self.bed, path, "in_accel_hysteresis")
        self.addCleanup(watcher.close)
        watcher.wait_for("0.05", "the sensitivity set at rest")
        self.assertIn("the hub's change sensitivity (0.05 g at rest", orientd(self.bed, "list-sensors").stdout)
        # Three seconds of quiet, longer than the detector's silence timeout (2 s).
        before = sent[0]
        time.sleep(3)  # a measurement window: the reports sent during it are counted
        self.assertEqual(sent[0], before, "a still device sends nothing")
        self.assertEqual(client.request("get")["state"]["device"], "portrait")
        pose[0] = (100, 0, 0)
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight", timeout=5)
        self.assertFalse(daemon.stderr_contains("sensor fault"), [line for line in daemon.stderr_lines if "fault" in line])
        self.assertFalse([line for line in daemon.stderr_lines if "unknown" in line and "device" in line])
        writes = len(os.read(enables, 65536)) // 16 if select.select([enables], [], [], 0)[0] else 0
        self.assertLessEqual(writes, 2, "buffer/enable written more than once each way: the buffer was made anew")


MAG_RISING = {f"events/in_accel_{axis}_mag_rising_en": "0" for axis in "xyz"}  # mma8452's transient detection


class MotionInterrupt(TestbedCase):
    """A sensor with a motion interrupt (IIO events): at rest the daemon sleeps on the event
    descriptor instead of polling. umockdev answers IIO_GET_EVENT_FD_IOCTL on the device's node
    with a pipe the test writes event records into (testbed.add_motion_interrupt)."""

    def serve(self, *args, pass_fds=()):
        return Pace.serve(self, *args, pass_fds=pass_fds)

    def counter(self, path):
        return Pace.counter(self, path)

    def motion_sensor(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), attributes=MAG_RISING)
        read_end, write_end = self.bed.add_motion_interrupt(0)
        self.addCleanup(lambda: [os.close(fd) for fd in (read_end, write_end) if _is_open(fd)])
        return path, read_end, write_end

    def test_at_rest_the_sensor_is_read_only_on_motion_and_the_switches_are_armed_while_it_runs(self):
        path, read_end, write_end = self.motion_sensor()
        counter = self.counter(path)
        daemon, client = self.serve(pass_fds=(read_end,))
        daemon.wait_for(lambda d: d.stderr_contains("at rest the sensor is read by the motion interrupt (events/in_accel_x_mag_rising_en, "
                                                    "events/in_accel_y_mag_rising_en, events/in_accel_z_mag_rising_en)"), what="the interrupt armed")
        self.assertEqual([self.bed.attribute(path, f"events/in_accel_{axis}_mag_rising_en") for axis in "xyz"], ["1"] * 3)
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read on the motion interrupt, and every 5 s"), what="rest")
        self.assertEqual(client.request("get")["state"]["rate"], 0.2, "a check read every 5 s")
        self.assertLessEqual(counter.count(3.0), 1, "no polling at rest (1.8 Hz would read 5 or 6 times)")
        # A turn: the interrupt fires, the sensor is read at once and the turn decided.
        self.bed.set_raw(path, 1000, 0, 0)
        os.write(write_end, motion_event())
        daemon.wait_for(lambda d: d.stderr_contains("the device moves: read at the sampling rate"), what="motion")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight", timeout=3)
        # Back at rest, an event of another channel or a second record in one read changes nothing.
        daemon.wait_for(lambda d: sum("the device rests: read on the motion interrupt" in line for line in d.stderr_lines) == 2, what="rest again")
        self.assertEqual(daemon.stop(), 0)
        self.assertEqual([self.bed.attribute(path, f"events/in_accel_{axis}_mag_rising_en") for axis in "xyz"], ["0"] * 3, "disarmed")

    def test_a_check_read_sees_a_turn_the_interrupt_missed(self):
        path, read_end, _ = self.motion_sensor()
        daemon, client = self.serve(pass_fds=(read_end,))
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read on the motion interrupt"), what="rest")
        self.bed.set_raw(path, 1000, 0, 0)  # no event: a threshold too coarse for this turn
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight", timeout=8)

    def test_an_interrupt_that_fails_leaves_polling_at_the_rest_rate_said_once(self):
        path, read_end, write_end = self.motion_sensor()
        counter = self.counter(path)
        daemon, client = self.serve(pass_fds=(read_end,))
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read on the motion interrupt"), what="rest")
        os.close(write_end)  # the descriptor ends, as when the device goes away
        daemon.wait_for(lambda d: d.stderr_contains("at rest the sensor is read by polling at the rest rate (the motion interrupt failed"),
                        what="the failure in the log")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="rest by polling")
        self.assertEqual(client.request("get")["state"]["rate"], 1.8)
        self.assertGreaterEqual(counter.count(2.0), 3, "polled at 1.8 Hz")
        self.assertEqual(sum("motion interrupt failed" in line for line in daemon.stderr_lines), 1, "said once")
        self.assertEqual(client.request("get")["state"]["sensor"], "active", "not a sensor fault")

    def test_an_interrupt_that_cannot_be_armed_leaves_polling_at_the_rest_rate(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), attributes=MAG_RISING)
        os.makedirs(os.path.join(self.bed.root, "dev"), exist_ok=True)
        open(os.path.join(self.bed.root, "dev", "iio:device0"), "w").close()  # a node whose driver knows no such ioctl
        daemon, client = self.serve()
        daemon.wait_for(lambda d: d.stderr_contains("at rest the sensor is read by polling at the rest rate (the motion interrupt cannot be "
                                                    "armed: IIO_GET_EVENT_FD_IOCTL(/dev/iio:device0): ENOTTY"), what="why it is not armed")
        client.next_event(lambda e: e["state"]["device"] == "portrait")
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 1.8 Hz"), what="rest by polling")
        self.assertEqual(self.bed.attribute(path, "events/in_accel_x_mag_rising_en"), "0", "nothing armed")

    def test_list_sensors_says_it_rests_on_the_interrupt(self):
        self.bed.add_accelerometer(0, attributes=MAG_RISING)
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("at rest asleep on the motion interrupt (events/in_accel_x_mag_rising_en, events/in_accel_y_mag_rising_en, "
                      "events/in_accel_z_mag_rising_en), with a check read every 5 s", text)


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
