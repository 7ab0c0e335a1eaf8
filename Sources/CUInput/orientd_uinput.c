#include "orientd_uinput.h"

#include <errno.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <string.h>
#include <sys/ioctl.h>

int orientd_uinput_create_tablet_mode_switch(int fd, const char *name, const char **failed_step) {
    if (ioctl(fd, UI_SET_EVBIT, EV_SW) < 0) { *failed_step = "UI_SET_EVBIT EV_SW"; return errno; }
    if (ioctl(fd, UI_SET_SWBIT, SW_TABLET_MODE) < 0) { *failed_step = "UI_SET_SWBIT SW_TABLET_MODE"; return errno; }
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_VIRTUAL;
    strncpy(setup.name, name, UINPUT_MAX_NAME_SIZE - 1);
    if (ioctl(fd, UI_DEV_SETUP, &setup) < 0) { *failed_step = "UI_DEV_SETUP"; return errno; }
    if (ioctl(fd, UI_DEV_CREATE) < 0) { *failed_step = "UI_DEV_CREATE"; return errno; }
    return 0;
}

int orientd_uinput_destroy(int fd) {
    return ioctl(fd, UI_DEV_DESTROY) < 0 ? errno : 0;
}

size_t orientd_input_event_size(void) {
    return sizeof(struct input_event);
}

void orientd_input_event_encode(unsigned char *buffer, unsigned short type, unsigned short code, int value) {
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = type;
    event.code = code;
    event.value = value;
    memcpy(buffer, &event, sizeof event);
}

void orientd_input_event_decode(const unsigned char *buffer, unsigned short *type, unsigned short *code, int *value) {
    struct input_event event;
    memcpy(&event, buffer, sizeof event);
    *type = event.type;
    *code = event.code;
    *value = event.value;
}

int orientd_evdev_switch_state(int fd, unsigned char *bits, size_t length) {
    return ioctl(fd, EVIOCGSW(length), bits) < 0 ? errno : 0;
}

int orientd_evdev_absolute_axis(int fd, unsigned int axis, int *value, int *resolution) {
    struct input_absinfo info;
    memset(&info, 0, sizeof info);
    if (ioctl(fd, EVIOCGABS(axis), &info) < 0) return errno;
    *value = info.value;
    *resolution = info.resolution;
    return 0;
}
