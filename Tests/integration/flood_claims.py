"""A client that floods net.hadess.SensorProxy with claims: COUNT calls of each sensor's Claim
method sent at once, without waiting for any reply, on one connection; then it waits for every
answer (at most DEADLINE seconds) and prints one JSON line: how many were answered, the error names
and how many of each, the slowest answer, and how many are still unanswered.

    python3 flood_claims.py BUS_ADDRESS COUNT [DEADLINE] [SUSTAIN] [alternate]

With SUSTAIN seconds, it keeps COUNT calls waiting for that long, sending a new one for each answer
(a flood that goes on), and the line also says how many calls were answered in that time. With
`alternate`, each answer is followed by the other method of the sensor (a Release after a Claim,
and back), so that every call changes what the connection claims.

Run by the polkit tests of test_dbus.py, as root and as another user, and by `python3 -m bench
claims`."""
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
    sustain = float(sys.argv[4]) if len(sys.argv) > 4 else 0
    alternate = len(sys.argv) > 5 and sys.argv[5] == "alternate"
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    result = {"sent": 0, "answered": 0, "granted": 0, "errors": {}, "slowest": 0.0, "answered_while_sustained": 0}
    started = time.monotonic()

    def send(path, interface, method):
        connection.call(NAME, path, interface, method, None, None, Gio.DBusCallFlags.NONE,
                        int(deadline * 1000), None, answered, (path, interface, method))
        result["sent"] += 1

    def answered(source, outcome, call):
        now = time.monotonic()
        result["answered"] += 1
        result["slowest"] = max(result["slowest"], now - started)
        try:
            source.call_finish(outcome)
            result["granted"] += 1
        except GLib.Error as error:
            name = Gio.DBusError.get_remote_error(error) or error.message
            result["errors"][name] = result["errors"].get(name, 0) + 1
        if now - started < sustain:
            result["answered_while_sustained"] += 1
            path, interface, method = call
            if alternate:
                method = method.replace("Claim", "Release") if method.startswith("Claim") else method.replace("Release", "Claim")
            send(path, interface, method)

    for _ in range(count):
        for call in CALLS:
            send(*call)
    print("sent", flush=True)
    context = GLib.MainContext.default()
    while result["answered"] < result["sent"] and time.monotonic() - started < max(deadline, sustain + deadline):
        context.iteration(True)
    result["unanswered"] = result["sent"] - result["answered"]
    result["slowest"] = round(result["slowest"], 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
