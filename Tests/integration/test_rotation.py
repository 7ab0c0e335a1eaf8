"""`orientctl follow --rotate` against compositors nobody here wrote: a headless sway (checked through
its own IPC), wlr-randr against it, and X11 in Xvfb (xinput's touch matrix; xrandr's rotation, which
Xvfb lacks, as the command line a recording xrandr received)."""
import glob
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
import unittest

from daemon import Daemon
from testbed import NOBODY, ORIENTD, as_another_user, changes_user, reachable_by_everyone

ORIENTCTL = os.path.join(os.path.dirname(ORIENTD), "orientctl")
# Device pose → what the compositor must show (wl_output, counter-clockwise; docs/rotation.md).
TRANSFORMS = {"portrait": "normal", "landscapeRight": "90", "portraitUpsideDown": "180", "landscapeLeft": "270"}
XRANDR = {"normal": "normal", "90": "left", "180": "inverted", "270": "right"}
MATRICES = {  # xinput list-props prints the matrix as floats
    "normal": "1.000000, 0.000000, 0.000000, 0.000000, 1.000000, 0.000000, 0.000000, 0.000000, 1.000000",
    "90": "0.000000, -1.000000, 1.000000, 1.000000, 0.000000, 0.000000, 0.000000, 0.000000, 1.000000",
    "180": "-1.000000, 0.000000, 1.000000, 0.000000, -1.000000, 1.000000, 0.000000, 0.000000, 1.000000",
    "270": "0.000000, 1.000000, 0.000000, -1.000000, 0.000000, 1.000000, 0.000000, 0.000000, 1.000000",
}


class Lines:
    """A process's output read line by line as it comes (raw reads, no buffering surprises)."""

    def __init__(self, process, stream):
        self.process = process
        self.fd = stream.fileno()
        self.lines = []
        self.partial = b""

    def wait_for(self, predicate, what, timeout=15, feed=None):
        """Reads until a line satisfies `predicate`; `feed()` runs between reads (a device being
        held in a pose keeps sending samples)."""
        deadline = time.monotonic() + timeout
        seen = len(self.lines)
        while True:
            for line in self.lines[seen:]:
                if predicate(line):
                    return line
            seen = len(self.lines)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}: {self.lines[-10:]}")
            ready, _, _ = select.select([self.fd], [], [], min(remaining, 0.1))
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"exited ({self.process.returncode}) before {what}: {self.lines[-10:]}")
                *new, self.partial = (self.partial + chunk).split(b"\n")
                self.lines += [line.decode(errors="replace") for line in new]
            elif feed:
                feed()


@changes_user
class HeadlessSway(unittest.TestCase):
    """sway with the headless backend and the pixman renderer, as nobody (sway refuses root)."""

    def setUp(self):
        self.runtime = tempfile.mkdtemp(prefix="orientd-sway-")
        os.chown(self.runtime, NOBODY, NOBODY)
        os.chmod(self.runtime, 0o700)
        config = os.path.join(self.runtime, "config")
        open(config, "w").close()
        environment = {"HOME": self.runtime, "XDG_RUNTIME_DIR": self.runtime, "WLR_BACKENDS": "headless",
                       "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1", "PATH": "/usr/bin:/bin"}
        self.sway = subprocess.Popen(as_another_user(self) + ["sway", "-V", "-c", config], env=environment,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self.stop, self.sway)
        Lines(self.sway, self.sway.stderr).wait_for(lambda line: "Running compositor on wayland display" in line, "sway to start")
        self.swaysock = glob.glob(os.path.join(self.runtime, "sway-ipc.*.sock"))[0]
        self.session = {"SWAYSOCK": self.swaysock, "XDG_RUNTIME_DIR": self.runtime, "WAYLAND_DISPLAY": "wayland-1",
                        "PATH": os.environ["PATH"]}
        self.daemon = Daemon("--dbus", "off", "--config", "/dev/null", "--claim-linger", "0")
        self.addCleanup(self.daemon.stop)

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def swaymsg(self, *args):
        result = subprocess.run(as_another_user(self) + ["swaymsg", *args], env=self.session, capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def sway_transform(self):
        return json.loads(self.swaymsg("-t", "get_outputs", "-r"))[0]["transform"]

    def follow(self, *args):
        process = subprocess.Popen(as_another_user(self) + [reachable_by_everyone(ORIENTCTL), "follow", "--socket", self.daemon.socket_path, *args], env=self.session,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.stop, process)
        return process, Lines(process, process.stdout), Lines(process, process.stderr)

    def hold(self, pose, output):
        """Holds the device in `pose` until follow says the output turned."""
        self.daemon.pose(pose)
        return output.wait_for(lambda line: line.startswith(f"{TRANSFORM_INTERFACE[pose]}: HEADLESS-1 "), f"follow to turn for {pose}",
                               feed=lambda: self.daemon.pose(pose, samples=2))

    def turn(self, watcher, pose, field="interface", timeout=15):
        """Holds the device in `pose` until the watcher (subscribed beforehand) sees `field` follow."""
        expected = TRANSFORM_INTERFACE[pose] if field == "interface" else pose
        deadline = time.monotonic() + timeout
        self.daemon.pose(pose)
        while True:
            self.daemon.pose(pose, samples=2)
            try:
                return watcher.next_event(lambda e: e["state"][field] == expected, timeout=0.1)
            except (TimeoutError, OSError):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the {field} did not follow {pose}")

    def test_every_pose_and_the_lock_through_swaymsg(self):
        process, output, errors = self.follow("--rotate", "auto")
        errors.wait_for(lambda line: "--rotate auto: sway (SWAYSOCK is set)" in line, "auto's choice")
        errors.wait_for(lambda line: "output HEADLESS-1" in line, "the output chosen")
        for pose in ("portrait", "landscapeRight", "portraitUpsideDown", "landscapeLeft", "portrait"):
            line = self.hold(pose, output)
            self.assertEqual(line, f"{TRANSFORM_INTERFACE[pose]}: HEADLESS-1 {TRANSFORMS[pose]}")
            self.assertEqual(self.sway_transform(), TRANSFORMS[pose], f"sway's own view for {pose}")
        # Locked: turning the device changes nothing; unlocked, the interface follows again.
        controller = self.daemon.client()
        controller.request("subscribe", topics=["device"])
        self.assertTrue(controller.request("lock", on=True)["ok"])
        self.turn(controller, "landscapeLeft", field="device")
        self.assertEqual(self.sway_transform(), "normal", "the lock holds the screen")
        self.assertTrue(controller.request("lock", on=False)["ok"])
        output.wait_for(lambda line: line == "landscapeRight: HEADLESS-1 270", "the unlock to turn the screen",
                        feed=lambda: self.daemon.pose("landscapeLeft", samples=2))
        self.assertEqual(self.sway_transform(), "270")

    def test_a_touch_device_is_mapped_and_dry_run_changes_nothing(self):
        # Headless sway lists no input devices: a named one is mapped (sway keeps the setting for
        # when it appears), and --dry-run prints the command lines instead.
        process, output, errors = self.follow("--rotate", "sway", "--touch", "1267:12345:ELAN_Touchscreen", "--dry-run")
        self.daemon.pose("portrait")
        output.wait_for(lambda line: line == "swaymsg input 1267:12345:ELAN_Touchscreen map_to_output HEADLESS-1", "the dry run",
                        feed=lambda: self.daemon.pose("portrait", samples=2))
        self.assertIn("swaymsg output HEADLESS-1 transform normal", output.lines)
        self.daemon.pose("landscapeRight")
        output.wait_for(lambda line: line == "swaymsg output HEADLESS-1 transform 90", "the dry run's turn",
                        feed=lambda: self.daemon.pose("landscapeRight", samples=2))
        self.assertEqual(self.sway_transform(), "normal", "a dry run turns nothing")
        self.stop(process)
        process, output, errors = self.follow("--rotate", "sway", "--touch", "1267:12345:ELAN_Touchscreen")
        output.wait_for(lambda line: line == "landscapeLeft: HEADLESS-1 90", "the real turn",
                        feed=lambda: self.daemon.pose("landscapeRight", samples=2))
        self.assertEqual(self.sway_transform(), "90")
        self.assertFalse([line for line in errors.lines if "failed" in line], errors.lines)

    def test_wlr_randr_failures_are_reported_once_and_following_goes_on(self):
        # sway 1.7's headless output is not configurable through wlr-output-management ("Enabled:
        # no", 0x0): wlr-randr's refusal is reported once, however many turns follow.
        listing = subprocess.run(as_another_user(self) + ["wlr-randr"], env=self.session, capture_output=True, text=True, timeout=10)
        self.assertIn("HEADLESS-1", listing.stdout)
        process, output, errors = self.follow("--rotate", "wlroots")
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["interface"])
        # The interface starts portrait (the natural orientation); each turn is a change.
        for pose in ("landscapeRight", "portrait", "portraitUpsideDown", "portrait"):
            self.turn(watcher, pose)
        errors.wait_for(lambda line: "turning the output failed: wlr-randr --output HEADLESS-1 --transform" in line, "the failure")
        self.assertIsNone(process.poll(), "following goes on")
        self.stop(process)
        rest = process.stderr.read().decode()
        failures = [line for line in errors.lines + rest.splitlines() if "turning the output failed" in line]
        self.assertEqual(len(failures), 1, failures)
        self.assertEqual(self.sway_transform(), "normal")


# The interface orientation each device pose gives (the landscape poses cross over).
TRANSFORM_INTERFACE = {"portrait": "portrait", "landscapeRight": "landscapeLeft", "portraitUpsideDown": "portraitUpsideDown",
                       "landscapeLeft": "landscapeRight"}


class X11(unittest.TestCase):
    """Xvfb: the touch matrix through the real xinput; xrandr's rotation recorded."""

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="orientd-x11-")
        # -noreset: without it Xvfb resets (devices and their properties too) whenever its last
        # client leaves, as each xinput does.
        self.xvfb = subprocess.Popen(["Xvfb", ":93", "-noreset", "-screen", "0", "800x1280x24", "-nolisten", "tcp", "-displayfd", "1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(HeadlessSway.stop, self.xvfb)
        Lines(self.xvfb, self.xvfb.stdout).wait_for(lambda line: line.strip() == "93", "Xvfb to start")
        # A recording xrandr: Xvfb's RandR cannot rotate, so the command line is what is checked.
        bin_directory = os.path.join(self.directory, "bin")
        os.mkdir(bin_directory)
        self.record = os.path.join(self.directory, "xrandr.log")
        with open(os.path.join(bin_directory, "xrandr"), "w") as handle:
            handle.write(f"""#!/bin/sh
echo "$@" >> {self.record}
if [ "$1" = --query ]; then
  echo "Screen 0: minimum 8 x 8, current 800 x 1280, maximum 32767 x 32767"
  echo "HDMI-1 disconnected (normal left inverted right x axis y axis)"
  echo "DSI-1 connected primary 800x1280+0+0 (normal left inverted right x axis y axis) 107mm x 172mm"
fi
""")
        os.chmod(os.path.join(bin_directory, "xrandr"), 0o755)
        self.session = dict(os.environ, DISPLAY=":93", PATH=bin_directory + ":" + os.environ["PATH"])
        for key in ("SWAYSOCK", "WAYLAND_DISPLAY", "HYPRLAND_INSTANCE_SIGNATURE", "XDG_CURRENT_DESKTOP"):
            self.session.pop(key, None)
        self.daemon = Daemon("--dbus", "off", "--config", "/dev/null")
        self.addCleanup(self.daemon.stop)

    def matrix(self, device):
        result = subprocess.run(["xinput", "list-props", device], env=self.session, capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 0, result.stderr)
        line = next(line for line in result.stdout.splitlines() if "Coordinate Transformation Matrix" in line)
        return line.split(":", 1)[1].strip()

    def test_every_pose_turns_the_touch_matrix_and_the_recorded_xrandr(self):
        device = "Xvfb mouse"
        process = subprocess.Popen([ORIENTCTL, "follow", "--socket", self.daemon.socket_path, "--rotate", "auto", "--touch", device],
                                   env=self.session, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(HeadlessSway.stop, process)
        output, errors = Lines(process, process.stdout), Lines(process, process.stderr)
        errors.wait_for(lambda line: "--rotate auto: x11 (DISPLAY is set)" in line, "auto's choice")
        errors.wait_for(lambda line: "output DSI-1" in line, "the built-in panel")
        for pose in ("portrait", "landscapeRight", "portraitUpsideDown", "landscapeLeft"):
            self.daemon.pose(pose)
            transform = TRANSFORMS[pose]
            output.wait_for(lambda line: line == f"{TRANSFORM_INTERFACE[pose]}: DSI-1 {transform}", f"the turn for {pose}",
                            feed=lambda: self.daemon.pose(pose, samples=2))
            self.assertEqual(self.matrix(device), MATRICES[transform], pose)
            with open(self.record) as handle:
                self.assertEqual(handle.read().splitlines()[-1], f"--output DSI-1 --rotate {XRANDR[transform]}")
        self.assertFalse([line for line in errors.lines if "failed" in line], errors.lines)
