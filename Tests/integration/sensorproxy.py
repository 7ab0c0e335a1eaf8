"""A private system bus for the net.hadess.SensorProxy tests, and a Gio client of it.

There is no system bus on a build machine: a dbus-daemon of type `system` on a socket in a
temporary directory stands in for it, and every process of a test (orientd, monitor-sensor, Qt,
the Gio client) is pointed at it with DBUS_SYSTEM_BUS_ADDRESS, which libsystemd, GLib and libdbus
all honour."""
import os
import subprocess
import tempfile
import time

import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

NAME = "net.hadess.SensorProxy"
PATH = "/net/hadess/SensorProxy"
INTERFACE = "net.hadess.SensorProxy"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
{rules}
  </policy>
{include}
</busconfig>
"""

# Anyone may do anything.
PERMISSIVE_RULES = """    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="*"/>"""

# The default policy of a Debian system bus (dbus's system.conf): nobody may own a name or call a
# method unless a policy file says so; signals, replies and the bus driver are open.
RESTRICTIVE_RULES = """    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>"""

def clean_env(**extra):
    """The environment for processes that must not see umockdev's preload (the bus, the clients)."""
    env = {key: value for key, value in os.environ.items() if key not in ("LD_PRELOAD", "UMOCKDEV_DIR")}
    env.update(extra)
    return env


class PrivateSystemBus:
    """dbus-daemon of type system on a private socket; `address` is its DBUS_SYSTEM_BUS_ADDRESS.
    With `policy`, the bus has Debian's restrictive default policy and includes that file;
    without, anyone may do anything."""

    def __init__(self, policy=None):
        self.directory = tempfile.mkdtemp(prefix="orientd-bus-")
        os.chmod(self.directory, 0o755)  # a test connects as another user too
        socket = os.path.join(self.directory, "system_bus_socket")
        config = os.path.join(self.directory, "bus.conf")
        with open(config, "w") as handle:
            handle.write(BUS_CONFIG.format(socket=socket, rules=RESTRICTIVE_RULES if policy else PERMISSIVE_RULES,
                                           include=f"  <include>{policy}</include>" if policy else ""))
        self.process = subprocess.Popen(["dbus-daemon", "--config-file", config, "--nofork", "--print-address=1"],
                                        stdout=subprocess.PIPE, text=True, env=clean_env())
        # The daemon prints its address once it listens: no guessing how long that takes.
        self.address = self.process.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon did not start")

    def env(self, base=None, **extra):
        env = dict(base if base is not None else clean_env())
        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.address
        env.update(extra)
        return env

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


class BusClient:
    """One connection to the private bus (one unique name), recording the PropertiesChanged
    signals that reach it."""

    def __init__(self, bus):
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        self.connection = Gio.DBusConnection.new_for_address_sync(bus.address, flags, None, None)
        self.changes = []
        # Both objects' signals (the compass has its own path).
        self.connection.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", None, None,
                                         Gio.DBusSignalFlags.NONE, self._changed)

    @property
    def unique_name(self):
        return self.connection.get_unique_name()

    def _changed(self, connection, sender, path, interface, signal, parameters):
        name, changed, invalidated = parameters.unpack()
        self.changes.append(changed)

    def call(self, member, parameters=None, interface=INTERFACE, path=PATH, reply_type=None, timeout=5, destination=NAME):
        result = self.connection.call_sync(destination, path, interface, member, parameters,
                                           GLib.VariantType(reply_type) if reply_type else None,
                                           Gio.DBusCallFlags.NONE, int(timeout * 1000), None)
        return result.unpack() if result is not None else None

    def get(self, prop, interface=INTERFACE, path=PATH):
        return self.call("Get", GLib.Variant("(ss)", (interface, prop)), interface="org.freedesktop.DBus.Properties", path=path)[0]

    def get_all(self, interface=INTERFACE, path=PATH):
        return self.call("GetAll", GLib.Variant("(s)", (interface,)), interface="org.freedesktop.DBus.Properties", path=path)[0]

    def introspect(self, path=PATH):
        return self.call("Introspect", None, interface="org.freedesktop.DBus.Introspectable", path=path)[0]

    def wait_for(self, predicate, timeout=10, what="a PropertiesChanged"):
        """Dispatches the connection's messages until predicate(self) holds."""
        context = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        while not predicate(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; changes so far: {self.changes}")
            # Blocks until a message arrives or the wake-up source below fires.
            fired = []
            source = GLib.timeout_add(100, lambda: fired.append(True))  # returns None: runs once
            context.iteration(True)
            if not fired:
                GLib.source_remove(source)
        return True

    def orientations(self):
        return [change["AccelerometerOrientation"] for change in self.changes if "AccelerometerOrientation" in change]

    def sync(self, through_bus=False):
        """A round trip to orientd (or to the bus itself): every signal it sent this connection
        before is dispatched after."""
        if through_bus:
            self.call("GetId", interface="org.freedesktop.DBus", path="/org/freedesktop/DBus", destination="org.freedesktop.DBus")
        else:
            self.get("HasAccelerometer")
        context = GLib.MainContext.default()
        while context.pending():
            context.iteration(False)

    def wait_for_name(self, name, start, timeout=10):
        """Runs `start` and waits until `name` has an owner on the bus (NameOwnerChanged)."""
        owners = []
        self.connection.signal_subscribe("org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                         "/org/freedesktop/DBus", name, Gio.DBusSignalFlags.NONE,
                                         lambda *args: owners.append(args[5].unpack()[2]))
        self.sync(through_bus=True)  # the bus has the subscription before anything can take the name
        started = start()
        self.wait_for(lambda _: any(owners), timeout, what=f"{name} on the bus")
        return started

    def close(self):
        if not self.connection.is_closed():
            self.connection.close_sync(None)
