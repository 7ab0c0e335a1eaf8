"""Adaptive pacing under umockdev: at rest the daemon reads the accelerometer at the rest rate, the
first reading that moves brings the sampling rate back, and --rest-rate 0 reads at the rate
always. How often the simulated attribute is read is counted with inotify (IN_ACCESS)."""
import ctypes
import os
import select
import struct
import tempfile
import time

from daemon import Client
from testbed import TestbedCase, orientd

IN_ACCESS = 0x1


class ReadCounter:
    """Counts read(2)s of one file by any process (inotify IN_ACCESS)."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        assert self.fd >= 0 and self.libc.inotify_add_watch(self.fd, path.encode(), IN_ACCESS) >= 0

    def count(self, seconds):
        """Reads of the file during the next `seconds` (a measurement window, not a synchronisation)."""
        os.read(self.fd, 65536) if select.select([self.fd], [], [], 0)[0] else None  # what came before
        reads, deadline = 0, time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if select.select([self.fd], [], [], remaining)[0]:
                data = os.read(self.fd, 65536)
                reads += sum(1 for offset in range(0, len(data), 16) if struct.unpack_from("iIII", data, offset)[1] & IN_ACCESS)
        return reads

    def close(self):
        os.close(self.fd)


class Pace(TestbedCase):
    def serve(self, *args):
        directory = tempfile.mkdtemp(prefix="orientd-pace-")
        socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off", "--base-sensor", "none",
                            "--log-level", "debug", *args)
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
        daemon.wait_for(lambda d: d.stderr_contains("the device rests: read at 2 Hz"), what="rest")
        self.assertEqual(client.request("get")["state"]["rate"], 2, "the rate in force, for clients")
        reads = counter.count(2.0)
        self.assertLessEqual(reads, 7, "2 Hz at rest (25 Hz would read about 50 times)")
        self.assertGreaterEqual(reads, 2)
        # A turn: the first reading that moves brings the rate back, and the turn is decided.
        self.bed.set_raw(path, 1000, 0, 0)
        daemon.wait_for(lambda d: d.stderr_contains("the device moves: read at the sampling rate"), what="motion")
        client.next_event(lambda e: e["state"]["device"] == "landscapeRight")
        self.assertEqual(sum("the device moves" in line for line in daemon.stderr_lines), 1)
        self.assertIn(client.request("get")["state"]["rate"], (25, 2), "the sampling rate, or rest again already")

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
        text = orientd(self.bed, "list-sensors").stdout
        self.assertIn("pacing        adaptive polling: the sampling rate while the device moves", text)
        self.assertIn("pacing        the buffer, paced by its trigger at the sampling rate (not adaptive)", text)

    def test_at_rest_nothing_but_the_poll_wakes_the_daemon(self):
        """No periodic timer besides the poll: libdispatch's 1 Hz workqueue monitor (started by the
        first global-queue job), a fixed-period silence check, and then a silence check at the
        detector's deadline (which every sample moves) each woke the daemon at rest for nothing."""
        self.bed.add_accelerometer(0, raw=(0, -1000, 0))
        daemon, client = self.serve()
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
                    counts[(task, name)] = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
                except FileNotFoundError:
                    pass  # a thread that ended meanwhile
            return counts
        before = switches()
        time.sleep(6)  # a measurement window, not a synchronisation
        after = switches()
        woken = {key[1]: after[key] - before.get(key, 0) for key in after if after[key] - before.get(key, 0) > 0}
        others = {name: count for name, count in woken.items() if name != "orientd-poll"}
        # At most the state's new rate going out (to the client, and systemd's status a second later);
        # a silence check at the detector's deadline woke the event loop every 1.5 s.
        self.assertLessEqual(sum(others.values()), 2, f"threads woken at rest besides the poll: {woken}")
        self.assertLessEqual(woken.get("orientd-poll", 0), 6 * 2 + 2, f"the poll at 2 Hz: {woken}")
