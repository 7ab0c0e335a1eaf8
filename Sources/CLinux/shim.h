/* Linux interfaces Swift's Glibc module leaves out: eventfd and thread names. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/eventfd.h>
