import Dispatch
import Logging

/// Saves the rotation lock (``KeptLockFile``) on a queue of its own, so the hub's loop never waits
/// for a disk's fsync. Saves run in order; a failed one (a full disk, a read-only state directory)
/// is a warning that names the file, and the lock still holds in memory until the daemon stops.
final class LockKeeper: Sendable {
    let path: String
    private let queue = DispatchQueue(label: "orientd-lock-keeper")
    private let logger = Logger(label: "orientd")

    init(path: String) {
        self.path = path
    }

    func keep(_ lock: KeptLock) {
        queue.async { [path, logger] in
            do throws(KeptLockError) {
                try KeptLockFile.save(lock, path: path)
                logger.debug("rotation lock kept", metadata: ["file": "\(path)", "locked": "\(lock.locked)"])
            } catch {
                logger.warning(
                    "rotation lock not kept across restarts: \(error); it holds until the daemon stops",
                    metadata: ["file": "\(path)"])
            }
        }
    }

    /// Waits for the saves queued so far (the daemon's stop, so none is lost to the exit).
    func flush() {
        queue.sync {}
    }
}
