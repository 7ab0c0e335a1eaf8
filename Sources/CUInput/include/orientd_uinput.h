/* uinput and evdev for orientd: the ioctls with structures Swift cannot build portably (struct
 * uinput_setup, struct input_event, whose time field differs between 32- and 64-bit ABIs). */
#ifndef ORIENTD_UINPUT_H
#define ORIENTD_UINPUT_H

#include <stddef.h>

/* Declares an EV_SW device with the SW_TABLET_MODE switch on an open /dev/uinput and creates it.
 * Returns 0, or an errno value with *failed_step naming the ioctl that failed. */
int orientd_uinput_create_tablet_mode_switch(int fd, const char *name, const char **failed_step);

/* Removes the device (UI_DEV_DESTROY); closing the descriptor does the same. */
int orientd_uinput_destroy(int fd);

/* The size of struct input_event on this ABI. */
size_t orientd_input_event_size(void);

/* Writes one struct input_event (time zero: the kernel stamps events written to uinput) into
 * buffer, which holds at least orientd_input_event_size() bytes. */
void orientd_input_event_encode(unsigned char *buffer, unsigned short type, unsigned short code, int value);

/* Reads a struct input_event from buffer (orientd_input_event_size() bytes). */
void orientd_input_event_decode(const unsigned char *buffer, unsigned short *type, unsigned short *code, int *value);

/* EVIOCGSW: the current state of the device's switches, as a bitmask of `length` bytes.
 * Returns 0 or an errno value. */
int orientd_evdev_switch_state(int fd, unsigned char *bits, size_t length);

/* EVIOCGABS: an absolute axis's current value and its resolution (for an accelerometer's ABS_X/Y/Z,
 * units per g). Returns 0 or an errno value. */
int orientd_evdev_absolute_axis(int fd, unsigned int axis, int *value, int *resolution);

#endif
