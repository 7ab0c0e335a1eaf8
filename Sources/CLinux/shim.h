/* Linux interfaces Swift's Glibc module leaves out: eventfd and thread names. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
/* struct ucred for SO_PEERCRED */
#include <sys/eventfd.h>
#include <sys/socket.h>
