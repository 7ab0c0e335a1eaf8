/* Linux interfaces Swift's Glibc module leaves out. They are declared here rather than reached with
 * _GNU_SOURCE, which would change how other system headers (fd_set) look from this module and clash
 * with the same headers seen through Dispatch. */
#include <sys/types.h>
#include <pthread.h>

/* sys/eventfd.h; the flags are O_CLOEXEC and O_NONBLOCK. */
int eventfd(unsigned int initval, int flags);

/* sys/socket.h (GNU extension): accept with SOCK_CLOEXEC | SOCK_NONBLOCK set in the same call.
 * Declared without the header (which would then belong to this module); the daemon passes no address. */
struct sockaddr;
int accept4(int sockfd, struct sockaddr *addr, unsigned int *addrlen, int flags);

/* pthread.h (GNU extension). */
int pthread_setname_np(pthread_t thread, const char *name);

/* struct ucred of sys/socket.h (GNU extension), filled by getsockopt(SO_PEERCRED). */
struct orientd_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/* sys/timerfd.h: the detector's silence alarm, re-armed by the sensor's thread without waking anyone. */
#include <sys/timerfd.h>

/* IIO_GET_EVENT_FD_IOCTL (linux/iio/events.h) on an IIO device's node: *descriptor receives a new
 * descriptor that yields struct iio_event_data records. Returns 0, or -1 with errno set. */
#include <sys/ioctl.h>
#include <linux/iio/events.h>
static inline int orientd_iio_event_descriptor(int node, int *descriptor) {
    return ioctl(node, IIO_GET_EVENT_FD_IOCTL, descriptor);
}

/* SIOCOUTQ (linux/sockios.h) on a client's socket: *bytes receives what the client has not read
 * yet, as the kernel counts it (a Unix socket counts each queued write's whole buffer: 1,280 for a
 * 430-byte line). Returns 0, or -1 with errno set. */
#include <linux/sockios.h>
static inline int orientd_socket_unread(int socket, int *bytes) {
    return ioctl(socket, SIOCOUTQ, bytes);
}

/* sys/epoll.h, for the fan-out benchmark's client (the daemon's loop is SwiftNIO's). */
#include <sys/epoll.h>

/* The Swift runtime's hook through which every job for the global executor goes
 * (swift_task_enqueueGlobal_hook, libswift_Concurrency; a function pointer, here as void *). Its
 * address is taken at link time: linked with the static standard library the hook is not among the
 * executable's dynamic symbols (the static stdlib links with --exclude-libs ALL), so a lookup by
 * name with dlsym, as SwiftNIO's install does, finds nothing. */
extern void *swift_task_enqueueGlobal_hook;
static inline void **orientd_concurrency_enqueue_global_hook(void) {
    return &swift_task_enqueueGlobal_hook;
}

/* libFuzzer's driver (libclang_rt.fuzzer_no_main), called by orientd-fuzz when built by `make fuzz`;
 * never linked into the daemon. */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const unsigned char *data, unsigned long size));
