import ArgumentParser
import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol
#if canImport(Glibc)
import Glibc
#endif

@main
struct Orientd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orientd",
        abstract: "Accelerometer → device orientation daemon for Linux tablets, convertibles, phones and kiosks.",
        discussion: """
            orientd reads an IIO accelerometer, filters its noisy stream into the seven device \
            orientations (unknown, portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, \
            faceDown), decides the interface orientation with UIKit's rotation rules, and tells every \
            client on its Unix socket the moment either changes (orientctl, docs/protocol.md). Without a \
            subcommand it runs the daemon (serve).

            Vectors are in the display frame, pointing the way gravity pulls: x towards the right edge \
            of the screen, y towards the top edge, z out of the screen, m/s²; upright portrait reads \
            (0, -9.81, 0).

            The screen rotates the wrong way? The sensor is mounted turned and its mount matrix is \
            unknown: orientd calibrate finds it from three poses and installs it for systemd's hwdb.
            """,
        version: orientdPackageVersion,
        subcommands: [
            ServeCommand.self, ReplayCommand.self, ListSensorsCommand.self, RecordCommand.self, CalibrateCommand.self,
            CheckResolverCommand.self, CheckConfigCommand.self, ReleaseBuffersCommand.self,
        ],
        defaultSubcommand: ServeCommand.self
    )

    /// Ignores SIGPIPE before anything runs: a peer that goes away (iiod, a client, a pipe reader)
    /// must give an EPIPE error to handle, not kill the process.
    ///
    /// Swift Concurrency's jobs run on NIO's event loop, not on libdispatch's global queues
    /// (``ConcurrencyOnEventLoop``): the first global-queue worker starts libdispatch's workqueue
    /// monitor, a 1 Hz timer that never stops (docs/sensors.md, power).
    static func main() async {
        NIOSingletons.groupLoopCountSuggestion = 1  // one thread for those jobs, asleep at rest
        ConcurrencyOnEventLoop.install()
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
