import ArgumentParser
import Logging
import OrientationCore
import OrientationDaemon
import SensorCore

// Options with a fixed set of values take them typed: a wrong value is refused by the parser with
// the list of right ones, `--help` shows them and shell completion offers them. The settings table
// still applies each as its name (the same words the configuration file takes), so an option and
// the file cannot disagree about what a value means.
extension DBusMode: ExpressibleByArgument {}
extension DeviceIdiom: ExpressibleByArgument {}
extension TabletModeSwitchMode: ExpressibleByArgument {}
extension AcquisitionMode: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
