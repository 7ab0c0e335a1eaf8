import CLinux
import NIOCore
import NIOPosix

/// Runs Swift Concurrency's jobs on NIO's singleton event loop instead of libdispatch's global
/// queues.
///
/// The first worker thread of a libdispatch global queue starts libdispatch's workqueue monitor, a
/// 1 Hz timer that never stops: a daemon at rest would wake once a second for nothing (measured on a
/// real kernel, `make vm-test` check 30: 1.2 wake-ups a second at rest, one of them that timer).
/// SwiftNIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor` does this,
/// but finds the runtime's hook by name with `dlsym`, which fails in the packaged binary (linked with
/// the static standard library, whose symbols are not exported); the hook's address is then taken
/// at link time (`orientd_concurrency_enqueue_global_hook`, CLinux) and set here the same way.
enum ConcurrencyOnEventLoop {
    /// The runtime's signature for the hook: the job, and the runtime's own enqueue.
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Whether jobs run on the event loop (false: on libdispatch's global queues, said by `serve`).
    nonisolated(unsafe) private(set) static var installed = false

    /// Call first thing in `main`, on the main thread, before any task is made.
    static func install() {
        if NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
            installed = true
            return
        }
        let hook = orientd_concurrency_enqueue_global_hook()!
        withUnsafeTemporaryAllocation(of: EnqueueGlobalHook.self, capacity: 1) { function in
            function.baseAddress!.initialize(to: { job, _ in
                let loop = MultiThreadedEventLoopGroup.singleton.any()
                loop.execute { job.runSynchronously(on: loop.executor.asUnownedSerialExecutor()) }
            })
            function.baseAddress!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) {
                hook.pointee = $0.pointee
            }
        }
        installed = hook.pointee != nil
    }
}
