"""A client that floods net.hadess.SensorProxy with claims: COUNT calls of each sensor's Claim
method sent at once, without waiting for any reply, on one connection; then it waits for every
answer (at most DEADLINE seconds) and prints one JSON line: how many were answered, the error names
and how many of each, the slowest answer, and how many are still unanswered.

    python3 flood_claims.py BUS_ADDRESS COUNT [DEADLINE]

Run by the polkit tests of test_dbus.py, as root and as another user."""
import json
import sys
import time

import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

NAME, PATH = "net.hadess.SensorProxy", "/net/hadess/SensorProxy"
CALLS = [(PATH, "net.hadess.SensorProxy", "ClaimAccelerometer"), (PATH, "net.hadess.SensorProxy", "ClaimLight"),
         (PATH, "net.hadess.SensorProxy", "ClaimProximity"),
         (PATH + "/Compass", "net.hadess.SensorProxy.Compass", "ClaimCompass")]


def main():
    address, count = sys.argv[1], int(sys.argv[2])
    deadline = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    result = {"sent": 0, "answered": 0, "granted": 0, "errors": {}, "slowest": 0.0}
    started = time.monotonic()

    def answered(source, outcome, _data):
        result["answered"] += 1
        result["slowest"] = max(result["slowest"], time.monotonic() - started)
        try:
            source.call_finish(outcome)
            result["granted"] += 1
        except GLib.Error as error:
            name = Gio.DBusError.get_remote_error(error) or error.message
            result["errors"][name] = result["errors"].get(name, 0) + 1

    for _ in range(count):
        for path, interface, method in CALLS:
            connection.call(NAME, path, interface, method, None, None, Gio.DBusCallFlags.NONE,
                            int(deadline * 1000), None, answered, None)
            result["sent"] += 1
    print("sent", flush=True)
    context = GLib.MainContext.default()
    while result["answered"] < result["sent"] and time.monotonic() - started < deadline:
        context.iteration(True)
    result["unanswered"] = result["sent"] - result["answered"]
    result["slowest"] = round(result["slowest"], 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
