"""Claims under a flood: how many claims each net.hadess.SensorProxy server answers a second while
four connections keep it busy, and how long the desktop's own ClaimAccelerometer takes meanwhile,
orientd (checking every claim with polkit) beside iio-sensor-proxy (Debian 12's 3.0, which checks
nothing: polkit came in 3.4). Writes its section of docs/benchmarks.md (marker claims-benchmark);
`python3 -m bench claims` runs it alone.

Run under umockdev-wrapper, as every section is: each daemon reads a umockdev testbed of its own."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench.common import ORIENTD, ROOT, percentile, machine, peer_version, write_section, Claimant, rss_kib
from sensorproxy import PrivateSystemBus  # noqa: E402 (bench.common put Tests/integration on the path)
from testbed import Testbed  # noqa: E402
from gi.repository import GLib  # noqa: E402

FLOODERS = 4
OUTSTANDING = 32  # calls of each of the four sensors waiting per flooder: 128, dbus-daemon's limit a connection
FLOOD_SECONDS = 20
POLKIT_DELAY = 0.1  # seconds dbusmock's polkitd takes for each check, one at a time: a loaded polkitd
DESKTOP_CLAIMS = 20  # during the flood, evenly spread; and 10 before it
FLOOD = os.path.join(ROOT, "Tests", "integration", "flood_claims.py")
CLAIM_ACTION = "net.hadess.SensorProxy.claim-sensor"
SERVERS = {
    "orientd": lambda: [ORIENTD, "serve", "--socket", os.path.join(tempfile.mkdtemp(prefix="claims-orientd-"), "o.sock"),
                        "--config", "/dev/null", "--dbus", "on", "--acquisition", "poll", "--rate", "25",
                        "--log-level", "warning"],
    "iio-sensor-proxy": lambda: ["/usr/sbin/iio-sensor-proxy"],
}


def start_polkit(bus):
    """dbusmock's polkitd on the bus, allowing the claim action, each answer after POLKIT_DELAY."""
    process = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=bus.env())
    probe = Claimant(bus)
    deadline = time.monotonic() + 10
    while True:
        try:
            for method, value in (("SetAllowed", GLib.Variant("(as)", ([CLAIM_ACTION],))),
                                  ("SetDelay", GLib.Variant("(d)", (POLKIT_DELAY,)))):
                probe.connection.call_sync("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock", method, value, None, 0, 5000, None)
            break
        except GLib.Error:
            if time.monotonic() > deadline:
                raise RuntimeError("dbusmock's polkitd did not come on the bus")
            time.sleep(0.05)  # polling for the name: no signal here says when a mock has started
    probe.close()
    return process


def desktop_claims(desktop, count, spacing):
    """`count` ClaimAccelerometer calls, each released again, `spacing` seconds apart: each one's
    latency, or the error name."""
    latencies, errors = [], []
    for _ in range(count):
        started = time.monotonic()
        try:
            desktop.call("ClaimAccelerometer", timeout=30)
            latencies.append(time.monotonic() - started)
            desktop.call("ReleaseAccelerometer", timeout=30)
        except GLib.Error as error:
            errors.append(error.message.split(":")[1] if error.message.startswith("GDBus.Error:") else error.message)
        time.sleep(max(0.0, spacing - (time.monotonic() - started)))  # pacing the desktop, not synchronisation
    return latencies, errors


def run(server, alternate):
    bus, bed = PrivateSystemBus(), Testbed()
    processes = []
    try:
        bed.add_accelerometer(0, name="accel", raw=(0, -1000, 0), scale="0.00981", sampling=None,
                              properties={"IIO_SENSOR_PROXY_TYPE": "iio-poll-accel", "NAME": '"accel"'})
        processes.append(start_polkit(bus))
        daemon = subprocess.Popen(SERVERS[server](), env=bus.env(bed.env()), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(daemon)
        desktop = Claimant(bus)
        deadline = time.monotonic() + 10
        while True:
            try:
                if desktop.get("HasAccelerometer"):
                    break
            except GLib.Error:
                pass
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError(f"{server} did not publish the accelerometer")
            time.sleep(0.05)  # polling the property: nothing signals the name's arrival to this client
        quiet, quiet_errors = desktop_claims(desktop, 10, 0.2)
        rss_before = rss_kib(daemon.pid, "RssAnon")
        # The flooders are another user (nobody), as on a shared machine; flood_claims.py from a
        # folder that user can read.
        shared = tempfile.mkdtemp(prefix="claims-flood-")
        os.chmod(shared, 0o755)
        flood = shutil.copy(FLOOD, shared)
        os.chmod(flood, 0o755)
        flooders = [subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", flood, bus.address, str(OUTSTANDING), "30", str(FLOOD_SECONDS)]
                                     + (["alternate"] if alternate else []),
                                     stdout=subprocess.PIPE, text=True, env=bus.env()) for _ in range(FLOODERS)]
        processes += flooders
        for flooder in flooders:
            if flooder.stdout.readline().strip() != "sent":
                raise RuntimeError("a flooder did not start")
        flood_started = time.monotonic()
        busy, busy_errors = desktop_claims(desktop, DESKTOP_CLAIMS, (FLOOD_SECONDS - 2) / DESKTOP_CLAIMS)
        results = [json.loads(flooder.stdout.readline()) for flooder in flooders]
        for flooder in flooders:
            flooder.wait(60)
        desktop.close()
        answered = sum(r["answered_while_sustained"] for r in results)
        errors = {}
        for r in results:
            for name, count in r["errors"].items():
                errors[name] = errors.get(name, 0) + count
        return dict(quiet=quiet, quiet_errors=quiet_errors, busy=busy, busy_errors=busy_errors,
                    rate=answered / FLOOD_SECONDS, granted=sum(r["granted"] for r in results),
                    answered=sum(r["answered"] for r in results), unanswered=sum(r["unanswered"] for r in results),
                    errors=errors, rss_growth=rss_kib(daemon.pid, "RssAnon") - rss_before,
                    desktop_span=time.monotonic() - flood_started)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        bus.stop()
        bed.cleanup()


def ms(seconds):
    return f"{seconds * 1000:.0f} ms"


def claims_section():
    started = time.monotonic()
    runs = {}
    for alternate in (False, True):
        for server in SERVERS:
            print(f"bench: claims: {server}{', claims and releases alternating' if alternate else ''}", file=sys.stderr, flush=True)
            runs[server, alternate] = run(server, alternate)
    lines = ["<!-- claims-benchmark:begin -->", "",
             f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; iio-sensor-proxy {peer_version()} (Debian), "
             f"orientd release build. This section took {time.monotonic() - started:.0f} s.", "",
             "```sh", "make bench                                                   # runs it with the others, or alone:",
             "ORIENTD=$PWD/.build/release/orientd umockdev-wrapper /usr/bin/python3 -m bench claims", "```", "",
             "Each daemon serves net.hadess.SensorProxy on a private D-Bus system bus (dbus-daemon's defaults: a connection "
             "waits for 128 replies at most), under umockdev, with python3-dbusmock's polkitd allowing the claim action and "
             f"answering each check after {POLKIT_DELAY * 1000:.0f} ms, one at a time (a loaded polkitd). orientd asks polkit "
             "about every claim and release; iio-sensor-proxy 3.0 asks nothing (its polkit checks came in 3.4), so its column "
             f"is what answering costs without any check. {FLOODERS} connections of another user (nobody; `Tests/integration/flood_claims.py`) each keep "
             f"{OUTSTANDING} calls of each of the four Claim methods waiting ({OUTSTANDING * 4}, the bus's limit) for "
             f"{FLOOD_SECONDS} s, sending a new one for each answer: the same Claim again (a claim of what the connection "
             "claims already is answered at once by both daemons and checked by nobody), or, in the second pair of rows, "
             "the sensor's Release after a Claim and the Claim after a Release, so that every call changes something and "
             "orientd checks it. Meanwhile the desktop (root here), on a connection of its own, calls "
             f"ClaimAccelerometer {DESKTOP_CLAIMS} times, evenly spread, releasing after each; before the flood, 10 times.", "",
             "| daemon | flood | polkit checks | claims answered per second under the flood | flooders' calls answered / still waiting at the end | their errors | desktop's claim before the flood, median | during it, median | during it, max | desktop's claims refused | heap growth |",
             "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for (server, alternate), r in runs.items():
        errors = ", ".join(f"{name.rsplit('.', 1)[-1]} {count}" for name, count in sorted(r["errors"].items())) or "none"
        busy = r["busy"] or [float("nan")]
        lines.append(f"| {server} | {'claim, release, claim…' if alternate else 'the same claims'} | {'yes' if server == 'orientd' else 'no'} | {r['rate']:.0f} | {r['answered']} / {r['unanswered']} | "
                     f"{errors} | {ms(percentile(r['quiet'], 50))} | {ms(percentile(busy, 50))} | {ms(max(busy))} | "
                     f"{len(r['busy_errors'])} of {DESKTOP_CLAIMS} | {r['rss_growth'] / 1024:.1f} MiB |")
    o = runs["orientd", True]
    lines += ["", "orientd answers a caller's waiting calls with one check (the answer is about the caller and the action, "
              "the same for all of them), so a flooding connection costs one check per round, and the desktop's check waits "
              f"for at most one check per user ahead of it: during the alternating flood its claim took {ms(percentile(o['busy'], 50))} "
              f"(median) where it took {ms(percentile(o['quiet'], 50))} without it"
              + (f"; refused: {', '.join(sorted(set(o['busy_errors'])))}." if o["busy_errors"] else ", and none was refused.")
              + " LimitsExceeded errors, where any, come from dbus-daemon itself, to a flooder that has 128 calls waiting.",
              "", "<!-- claims-benchmark:end -->"]
    write_section("claims-benchmark", "Claims under a flood", "\n".join(lines))
