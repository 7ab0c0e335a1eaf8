/*
 * hid-sensor-hub: a HID sensor hub (as x86 convertibles and Windows tablets
 * carry) played through the kernel's /dev/uhid, so that the kernel's own
 * hid-sensor-hub and hid-sensor-{accel-3d,gyro-3d,als,magn-3d,prox} drivers
 * create real IIO devices.  Nothing under /sys is faked: this program is the
 * "firmware" on the far side of the HID transport, nothing more.
 *
 * Build:  gcc -O2 -static -Wall -Wextra -o hid-sensor-hub hid-sensor-hub.c
 * Run:    hid-sensor-hub [--control FIFO] [--status FILE] [--quiet]
 *         Without --control, commands are read from stdin.
 *
 * Command language (one command per line; '#' starts a comment):
 *   create HUB SENSOR...   make a uhid device named HUB whose report descriptor
 *                          holds those sensors: accel gyro als compass prox
 *                          (or "all").  One /dev/uhid handle per hub.
 *   destroy HUB            remove it (the kernel removes its IIO devices)
 *   accel X Y Z            acceleration in m/s^2, device frame
 *   gyro X Y Z             angular velocity in rad/s
 *   als LUX                illuminance in lux
 *   compass DEG            tilt-compensated heading from magnetic north
 *   prox NEAR|FAR          human presence (also 1|0)
 *   play FILE              CSV "t,x,y,z" or "t,x,y,z,gx,gy,gz" (t in s, m/s^2,
 *                          rad/s) played in real time, then its last row held
 *   stop                   stop a playing trace (values hold)
 *   noise on|off           +-1 count of jitter on each accel/gyro axis
 *   status                 rewrite the status file now
 *   quit                   destroy all hubs and exit
 * The physical values are one "world" shared by every hub; at start it is
 * accel 0 -9.80665 0, gyro 0 0 0, als 100, compass 0, prox far, noise off.
 *
 * Behaviour, like a real hub's firmware:
 *  - each sensor is a top-level Physical collection on the Sensors page with
 *    one report id for its feature report (reporting state, power state,
 *    report interval, change sensitivity) and its input report (data);
 *  - input reports go out only between UHID_OPEN and UHID_CLOSE, and only for
 *    a sensor whose power state is D0 (2) and whose reporting state allows
 *    events; one every report interval (default 100 ms, at least 10 ms);
 *  - with a change sensitivity S > 0, a report goes out only when some value
 *    moved by >= S counts since the last one sent; the first sample after a
 *    sensor powers up always goes out (so a reader learns the current state);
 *  - GET_REPORT answers feature reports with the current settings and input
 *    reports with the current values (that is how in_*_raw reads work);
 *    SET_REPORT stores the settings and replies success;
 *  - at creation every sensor is D4 (off) with no events, interval 100 ms,
 *    sensitivity accel 5 (0.05 g), gyro 5 (0.5 deg/s), als 5 lux, compass 1
 *    degree, prox 1.
 * Units on the wire: accel 0.01 g (exp -2), gyro 0.1 deg/s (exp -1), als lux,
 * compass whole degrees, prox 0/1; the kernel turns them into IIO scales.
 * Note: UHID_DESTROY is synchronous; while the kernel removes the devices
 * (about a second under qemu TCG) this single-threaded program is blocked.
 *
 * Status file (rewritten atomically on every command, every kernel request,
 * every open/close and once a second):
 *   status time=SECONDS pid=PID
 *   world accel=X,Y,Z gyro=X,Y,Z als=LUX compass=DEG prox=near|far noise=on|off playing=FILE|none
 *   hub name=HUB created=1 started=0|1 opened=0|1 sensors=accel,gyro,...
 *   sensor hub=HUB type=accel report_id=1 power=N power_name=D0|...
 *          reporting=N reporting_name=all|none|... active=0|1 interval_ms=N
 *          sensitivity=N reports=COUNT raw=V1,V2,V3
 *   (each "sensor" record is one line; "time" is CLOCK_MONOTONIC seconds so
 *   reports per second = delta(reports) / delta(time); sending an input
 *   report does not by itself rewrite the file, so counts lag by <= 1 s;
 *   a destroyed hub disappears from the file once the kernel has removed it).
 * The log (stderr) has one line per event: commands, UHID_START/OPEN/CLOSE,
 * every SET_REPORT decoded, input GET_REPORTs, sensors starting/stopping.
 *
 * Semantics follow what the kernel drivers expect (include/linux/
 * hid-sensor-ids.h, drivers/hid/hid-sensor-hub.c, drivers/iio/common/
 * hid-sensors): power state and reporting state are named-array selectors
 * whose values are "list position + 1" (power 2 = D0 full power, 6 = D4 off;
 * reporting 1 = no events, 2 = all events), report interval is in ms, change
 * sensitivity is absolute, in the data field's own units and exponent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/uhid.h>

#define MAX_HUBS 8
#define NKINDS 5
#define MIN_INTERVAL_MS 10 /* fastest report interval of this "firmware" */
#define FEATURE_SIZE 9 /* id, reporting, power, interval(4), sensitivity(2) */

/* Enumerated selector values as the kernel writes them (position + 1). */
enum { POWER_UNDEFINED = 1, POWER_D0 = 2, POWER_D1, POWER_D2, POWER_D3, POWER_D4 };
enum { REP_NONE = 1, REP_ALL, REP_THRESHOLD, REP_NONE_WAKE, REP_ALL_WAKE, REP_THRESHOLD_WAKE };

/// What one kind of sensor looks like in the descriptor.
struct kind {
	const char *name;
	uint8_t usage;          /* sensor usage on page 0x20 (0x73 = Accelerometer 3D) */
	uint8_t report_id;      /* fixed per kind, so ids never clash within a hub */
	int naxes;
	uint16_t axis[3];       /* data usages (low 16 bits on page 0x20) */
	int bits;               /* size of each data field */
	int exponent;           /* HID unit exponent of the data (and sensitivity) */
	int32_t lmin, lmax;     /* logical range of the data */
	uint16_t sens_usage;    /* absolute change sensitivity usage */
	uint16_t sens_default;  /* in data counts */
};

static const struct kind kinds[NKINDS] = {
	/* 0.01 g per count, unit exponent -2: the driver's scale is 0.0980665 */
	{ "accel", 0x73, 1, 3, { 0x0453, 0x0454, 0x0455 }, 16, -2, -32767, 32767, 0x030F, 5 },
	/* 0.1 deg/s per count (default unit deg/s, exponent -1): scale 0.001745329 rad/s */
	{ "gyro", 0x76, 2, 3, { 0x0457, 0x0458, 0x0459 }, 16, -1, -32767, 32767, 0x030F, 5 },
	/* whole lux (default unit lux) */
	{ "als", 0x41, 3, 1, { 0x04D1 }, 32, 0, 0, 0x7FFFFFFF, 0x030F, 5 },
	/* compensated magnetic north in whole degrees -> in_rot_from_north_magnetic_tilt_comp;
	 * its sensitivity is the "change sensitivity absolute" modifier (0x1000) on that
	 * same usage (0x1475): hid-sensor-magn-3d looks there for in_rot_hysteresis. */
	{ "compass", 0x83, 4, 1, { 0x0475 }, 16, 0, 0, 359, 0x1475, 1 },
	/* human presence 0/1; 32 bits because every hid-sensor-prox version takes 4 bytes */
	{ "prox", 0x11, 5, 1, { 0x04B1 }, 32, 0, 0, 1, 0x030F, 1 },
};

struct sensor {
	int present;
	uint8_t reporting, power;
	uint32_t interval_ms;
	uint16_t sensitivity;
	int32_t last_sent[3];
	int have_sent;          /* a report went out since the sensor became active */
	int active;
	int64_t next_due;       /* ms, monotonic */
	uint64_t reports;
};

struct hub {
	int used;
	char name[64];
	int fd;
	int started, opened;
	struct sensor s[NKINDS];
};

static struct hub hubs[MAX_HUBS];

/* The world: one physical device that every hub senses. */
static double w_accel[3] = { 0, -9.80665, 0 }, w_gyro[3], w_lux = 100, w_heading;
static int w_near, noise_on;

/* A trace being played. */
static struct { double t, v[6]; int ncol; } *trace;
static size_t trace_len, trace_pos;
static int64_t trace_start;
static char trace_name[256];
static int playing;

static const char *status_path;
static int quiet, quitting;
static int64_t t0;

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	fprintf(stderr, "[%9.3f] ", (now_ms() - t0) / 1000.0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *power_name(int v)
{
	static const char *n[] = { "?", "undefined", "D0", "D1", "D2", "D3", "D4" };
	return v >= 1 && v <= 6 ? n[v] : n[0];
}

static const char *reporting_name(int v)
{
	static const char *n[] = { "?", "none", "all", "threshold", "none-wake", "all-wake", "threshold-wake" };
	return v >= 1 && v <= 6 ? n[v] : n[0];
}

static int reporting_allows_events(int v)
{
	return v == REP_ALL || v == REP_THRESHOLD || v == REP_ALL_WAKE || v == REP_THRESHOLD_WAKE;
}

/* ---- report descriptor --------------------------------------------------- */

struct buf { uint8_t d[4096]; int n; };

static void put(struct buf *b, int count, ...)
{
	va_list ap;
	va_start(ap, count);
	while (count-- > 0 && b->n < (int)sizeof(b->d))
		b->d[b->n++] = (uint8_t)va_arg(ap, int);
	va_end(ap);
}

static void usage16(struct buf *b, uint16_t u) { put(b, 3, 0x0A, u & 0xFF, u >> 8); }

static void logical_range(struct buf *b, int32_t lo, int32_t hi)
{
	put(b, 5, 0x17, lo & 0xFF, (lo >> 8) & 0xFF, (lo >> 16) & 0xFF, (lo >> 24) & 0xFF);
	put(b, 5, 0x27, hi & 0xFF, (hi >> 8) & 0xFF, (hi >> 16) & 0xFF, (hi >> 24) & 0xFF);
}

/// A one-byte named-array selector (reporting state, power state): a logical
/// collection named after the property holding the enumeration usages.  The
/// kernel finds the field through the collection's usage and writes
/// "position of the wanted enumeration + 1", which with logical minimum 1 is
/// exactly the HID array value of that enumeration.
static void selector(struct buf *b, uint16_t property, uint16_t first_enum, int nenum)
{
	usage16(b, property);
	put(b, 2, 0xA1, 0x02);                          /* Collection (Logical) */
	logical_range(b, 1, nenum);
	put(b, 4, 0x75, 8, 0x95, 1);                    /* 8 bits x 1 */
	for (int i = 0; i < nenum; i++)
		usage16(b, first_enum + i);
	put(b, 2, 0xB1, 0x00);                          /* Feature (Data,Array,Abs) */
	put(b, 1, 0xC0);
}

static void build_descriptor(const struct hub *h, struct buf *b)
{
	b->n = 0;
	for (int k = 0; k < NKINDS; k++) {
		const struct kind *K = &kinds[k];
		if (!h->s[k].present)
			continue;
		put(b, 2, 0x05, 0x20);                  /* Usage Page (Sensors) */
		put(b, 2, 0x09, K->usage);              /* Usage (the sensor) */
		/* Collection (Physical), as Intel ISH firmware does.  Debian 12's
		 * 6.1 kernel gives a device the sensor-hub group, and hid-sensor-hub
		 * an IIO device, only for physical collections on the Sensors page
		 * (application collections count only in later kernels), and a
		 * sensor's fields are looked up by their physical collection. */
		put(b, 2, 0xA1, 0x00);
		put(b, 2, 0x85, K->report_id);
		put(b, 4, 0x55, 0x00, 0x65, 0x00);      /* exponent 0, no unit (spec defaults) */
		/* feature report: the properties the kernel reads and writes */
		selector(b, 0x0316, 0x0840, 6);         /* Reporting State: no/all/threshold events (+wake) */
		selector(b, 0x0319, 0x0850, 6);         /* Power State: undefined, D0..D4 */
		usage16(b, 0x030E);                     /* Report Interval, ms */
		logical_range(b, 0, 0x7FFFFFFF);
		put(b, 4, 0x75, 32, 0x95, 1);
		put(b, 2, 0xB1, 0x02);                  /* Feature (Data,Var,Abs) */
		usage16(b, K->sens_usage);              /* Change Sensitivity Absolute */
		logical_range(b, 0, 0x7FFF);
		put(b, 4, 0x75, 16, 0x95, 1);
		put(b, 2, 0x55, K->exponent & 0x0F);    /* same units as the data */
		put(b, 2, 0xB1, 0x02);
		/* input report: one field per axis, because the kernel's raw read
		 * matches a field by its first usage */
		logical_range(b, K->lmin, K->lmax);
		put(b, 4, 0x75, K->bits, 0x95, 1);
		put(b, 2, 0x55, K->exponent & 0x0F);
		for (int a = 0; a < K->naxes; a++) {
			usage16(b, K->axis[a]);
			put(b, 2, 0x81, 0x02);          /* Input (Data,Var,Abs) */
		}
		put(b, 1, 0xC0);
	}
}

/* ---- values --------------------------------------------------------------- */

/* No libm: the program must link with a bare "gcc -static". */
#define PI 3.14159265358979323846

static int32_t clampi(double v, int32_t lo, int32_t hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return (int32_t)(v < 0 ? v - 0.5 : v + 0.5); /* round half away from zero */
}

static double pow10i(int e)
{
	double r = 1;
	for (; e > 0; e--)
		r *= 10;
	for (; e < 0; e++)
		r /= 10;
	return r;
}

/// Current data counts of a sensor, as the hub's firmware would convert them.
static void current_counts(int k, int32_t out[3])
{
	const struct kind *K = &kinds[k];
	for (int a = 0; a < 3; a++)
		out[a] = 0;
	switch (k) {
	case 0: case 1:
		for (int a = 0; a < 3; a++) {
			double c = k == 0 ? w_accel[a] / 9.80665 * 100.0   /* 0.01 g */
					  : w_gyro[a] * 180.0 / PI * 10.0; /* 0.1 deg/s */
			if (noise_on)
				c += (rand() % 3) - 1;
			out[a] = clampi(c, K->lmin, K->lmax);
		}
		break;
	case 2: out[0] = clampi(w_lux, K->lmin, K->lmax); break;
	case 3: {
		double h = w_heading - 360.0 * (double)(long long)(w_heading / 360.0);
		if (h < 0)
			h += 360.0;
		out[0] = clampi(h, 0, 360) % 360; /* 359.6 rounds to 0 */
		break;
	}
	case 4: out[0] = w_near ? 1 : 0; break;
	}
}

static int input_report(int k, const int32_t v[3], uint8_t *d)
{
	const struct kind *K = &kinds[k];
	int n = 0, bytes = K->bits / 8;
	d[n++] = K->report_id;
	for (int a = 0; a < K->naxes; a++)
		for (int i = 0; i < bytes; i++)
			d[n++] = (uint8_t)((uint32_t)v[a] >> (8 * i));
	return n;
}

static int feature_report(int k, const struct sensor *s, uint8_t *d)
{
	d[0] = kinds[k].report_id;
	d[1] = s->reporting;
	d[2] = s->power;
	for (int i = 0; i < 4; i++)
		d[3 + i] = (uint8_t)(s->interval_ms >> (8 * i));
	d[7] = s->sensitivity & 0xFF;
	d[8] = s->sensitivity >> 8;
	return FEATURE_SIZE;
}

static int kind_by_report_id(const struct hub *h, int id)
{
	for (int k = 0; k < NKINDS; k++)
		if (h->s[k].present && kinds[k].report_id == id)
			return k;
	return -1;
}

static int kind_by_name(const char *n)
{
	for (int k = 0; k < NKINDS; k++)
		if (!strcmp(kinds[k].name, n))
			return k;
	return -1;
}

/* ---- status file ---------------------------------------------------------- */

static void write_status(void)
{
	char tmp[512];
	FILE *f;
	if (!status_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", status_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "status time=%.3f pid=%d\n", now_ms() / 1000.0, (int)getpid());
	fprintf(f, "world accel=%.3f,%.3f,%.3f gyro=%.4f,%.4f,%.4f als=%.1f compass=%.1f prox=%s noise=%s playing=%s\n",
		w_accel[0], w_accel[1], w_accel[2], w_gyro[0], w_gyro[1], w_gyro[2], w_lux, w_heading,
		w_near ? "near" : "far", noise_on ? "on" : "off", playing ? trace_name : "none");
	for (int i = 0; i < MAX_HUBS; i++) {
		struct hub *h = &hubs[i];
		char list[64] = "";
		if (!h->used)
			continue;
		for (int k = 0; k < NKINDS; k++)
			if (h->s[k].present)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? "," : "", kinds[k].name);
		fprintf(f, "hub name=%s created=1 started=%d opened=%d sensors=%s\n",
			h->name, h->started, h->opened, list);
		for (int k = 0; k < NKINDS; k++) {
			struct sensor *s = &h->s[k];
			int32_t v[3];
			if (!s->present)
				continue;
			current_counts(k, v);
			fprintf(f, "sensor hub=%s type=%s report_id=%d power=%d power_name=%s reporting=%d reporting_name=%s active=%d interval_ms=%u sensitivity=%u reports=%llu raw=",
				h->name, kinds[k].name, kinds[k].report_id, s->power, power_name(s->power),
				s->reporting, reporting_name(s->reporting), s->active, s->interval_ms,
				s->sensitivity, (unsigned long long)s->reports);
			for (int a = 0; a < kinds[k].naxes; a++)
				fprintf(f, "%s%d", a ? "," : "", (int)v[a]);
			fputc('\n', f);
		}
	}
	if (fclose(f) == 0)
		rename(tmp, status_path);
}

/* ---- uhid ----------------------------------------------------------------- */

static int uhid_write(struct hub *h, const struct uhid_event *ev)
{
	ssize_t r = write(h->fd, ev, sizeof(*ev));
	if (r != (ssize_t)sizeof(*ev)) {
		logf_("%s: write to /dev/uhid failed: %s", h->name, r < 0 ? strerror(errno) : "short write");
		return -1;
	}
	return 0;
}

static void send_input(struct hub *h, int k, const int32_t v[3])
{
	struct uhid_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = UHID_INPUT2;
	ev.u.input2.size = (uint16_t)input_report(k, v, ev.u.input2.data);
	if (uhid_write(h, &ev) == 0) {
		struct sensor *s = &h->s[k];
		memcpy(s->last_sent, v, sizeof(s->last_sent));
		s->have_sent = 1;
		s->reports++;
	}
}

/// Decide, for every sensor, whether it may report now.  A real hub only
/// streams while its host has the device open and the sensor is at full
/// power with events enabled; everything else stays silent.
static void update_active(struct hub *h, int64_t now)
{
	for (int k = 0; k < NKINDS; k++) {
		struct sensor *s = &h->s[k];
		int a = s->present && h->opened && s->power == POWER_D0 && reporting_allows_events(s->reporting);
		if (a && !s->active) {
			s->have_sent = 0; /* the first sample after power-up always goes out */
			s->next_due = now + s->interval_ms;
			logf_("%s/%s: streaming every %u ms (sensitivity %u)", h->name, kinds[k].name,
			      s->interval_ms, s->sensitivity);
		} else if (!a && s->active) {
			logf_("%s/%s: silent (%s, power %s, reporting %s) after %llu reports", h->name,
			      kinds[k].name, h->opened ? "open" : "closed", power_name(s->power),
			      reporting_name(s->reporting), (unsigned long long)s->reports);
		}
		s->active = a;
	}
}

static void tick(struct hub *h, int64_t now)
{
	for (int k = 0; k < NKINDS; k++) {
		struct sensor *s = &h->s[k];
		int32_t v[3];
		int moved = 0;
		if (!s->active || now < s->next_due)
			continue;
		s->next_due += s->interval_ms;
		if (s->next_due <= now) /* we fell behind: no burst of catch-up reports */
			s->next_due = now + s->interval_ms;
		current_counts(k, v);
		for (int a = 0; a < kinds[k].naxes; a++)
			if (abs(v[a] - s->last_sent[a]) >= (int)s->sensitivity)
				moved = 1;
		/* With a change sensitivity set, a value that did not move by at least
		 * that much is withheld: a still device sends nothing. */
		if (!s->have_sent || s->sensitivity == 0 || moved)
			send_input(h, k, v);
	}
}

static void log_feature(struct hub *h, int k, const char *what)
{
	struct sensor *s = &h->s[k];
	double scale = pow10i(kinds[k].exponent);
	logf_("%s/%s %s: reporting=%d(%s) power=%d(%s) interval=%ums (%.3g Hz) sensitivity=%u (%g)",
	      h->name, kinds[k].name, what, s->reporting, reporting_name(s->reporting), s->power,
	      power_name(s->power), s->interval_ms, s->interval_ms ? 1000.0 / s->interval_ms : 0.0,
	      s->sensitivity, s->sensitivity * scale);
}

static void handle_uhid(struct hub *h)
{
	struct uhid_event ev, rep;
	ssize_t r = read(h->fd, &ev, sizeof(ev));
	int k;
	if (r <= 0) {
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			logf_("%s: read /dev/uhid: %s", h->name, strerror(errno));
		return;
	}
	memset(&rep, 0, sizeof(rep));
	switch (ev.type) {
	case UHID_START:
		h->started = 1;
		logf_("%s: UHID_START (a driver bound the device)", h->name);
		break;
	case UHID_STOP:
		h->started = 0;
		logf_("%s: UHID_STOP", h->name);
		break;
	case UHID_OPEN:
		h->opened = 1;
		logf_("%s: UHID_OPEN", h->name);
		break;
	case UHID_CLOSE:
		h->opened = 0;
		logf_("%s: UHID_CLOSE", h->name);
		break;
	case UHID_OUTPUT:
		logf_("%s: UHID_OUTPUT ignored (a sensor hub has no output reports)", h->name);
		break;
	case UHID_GET_REPORT:
		rep.type = UHID_GET_REPORT_REPLY;
		rep.u.get_report_reply.id = ev.u.get_report.id;
		k = kind_by_report_id(h, ev.u.get_report.rnum);
		if (k < 0) {
			rep.u.get_report_reply.err = EINVAL;
			logf_("%s: get-report for unknown report %d", h->name, ev.u.get_report.rnum);
		} else if (ev.u.get_report.rtype == UHID_FEATURE_REPORT) {
			rep.u.get_report_reply.size =
				(uint16_t)feature_report(k, &h->s[k], rep.u.get_report_reply.data);
		} else if (ev.u.get_report.rtype == UHID_INPUT_REPORT) {
			/* a polled read (in_*_raw): answer with the current values */
			int32_t v[3];
			current_counts(k, v);
			rep.u.get_report_reply.size = (uint16_t)input_report(k, v, rep.u.get_report_reply.data);
			logf_("%s/%s get-report input: %d %d %d", h->name, kinds[k].name, (int)v[0], (int)v[1], (int)v[2]);
		} else {
			rep.u.get_report_reply.err = EIO;
		}
		uhid_write(h, &rep);
		break;
	case UHID_SET_REPORT: {
		const uint8_t *d = ev.u.set_report.data;
		rep.type = UHID_SET_REPORT_REPLY;
		rep.u.set_report_reply.id = ev.u.set_report.id;
		k = kind_by_report_id(h, ev.u.set_report.rnum);
		if (k < 0 || ev.u.set_report.rtype != UHID_FEATURE_REPORT || ev.u.set_report.size < FEATURE_SIZE) {
			rep.u.set_report_reply.err = EIO;
			logf_("%s: set-report refused (report %d type %d size %d)", h->name,
			      ev.u.set_report.rnum, ev.u.set_report.rtype, ev.u.set_report.size);
		} else {
			struct sensor *s = &h->s[k];
			uint32_t iv = d[3] | d[4] << 8 | d[5] << 16 | (uint32_t)d[6] << 24;
			s->reporting = d[1];
			s->power = d[2];
			/* Like real firmware, clamp to the fastest interval we support;
			 * the kernel reads the interval back after writing it. */
			if (iv < MIN_INTERVAL_MS)
				iv = MIN_INTERVAL_MS;
			if (iv != s->interval_ms && s->active)
				s->next_due = now_ms() + iv;
			s->interval_ms = iv;
			s->sensitivity = (uint16_t)(d[7] | d[8] << 8);
			log_feature(h, k, "set-report");
		}
		uhid_write(h, &rep);
		break;
	}
	default:
		logf_("%s: uhid event %u ignored", h->name, ev.type);
	}
	update_active(h, now_ms());
	write_status();
}

static struct hub *find_hub(const char *name)
{
	for (int i = 0; i < MAX_HUBS; i++)
		if (hubs[i].used && !strcmp(hubs[i].name, name))
			return &hubs[i];
	return NULL;
}

static void destroy_hub(struct hub *h)
{
	struct uhid_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = UHID_DESTROY;
	uhid_write(h, &ev);
	close(h->fd);
	logf_("%s: destroyed", h->name);
	memset(h, 0, sizeof(*h));
}

static int create_hub(const char *name, char **sensors, int n)
{
	struct hub *h = NULL;
	struct uhid_event ev;
	struct buf b;
	if (find_hub(name)) {
		logf_("error: hub %s exists", name);
		return -1;
	}
	for (int i = 0; i < MAX_HUBS && !h; i++)
		if (!hubs[i].used)
			h = &hubs[i];
	if (!h || n < 1 || strlen(name) >= sizeof(h->name)) {
		logf_("error: create needs a free slot, a short name and sensors");
		return -1;
	}
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < n; i++) {
		int k = kind_by_name(sensors[i]);
		if (!strcmp(sensors[i], "all")) {
			for (k = 0; k < NKINDS; k++)
				h->s[k].present = 1;
			continue;
		}
		if (k < 0) {
			logf_("error: unknown sensor %s (accel gyro als compass prox)", sensors[i]);
			return -1;
		}
		h->s[k].present = 1;
	}
	for (int k = 0; k < NKINDS; k++) {
		/* power-on defaults of a hub: off and silent until the host asks */
		h->s[k].power = POWER_D4;
		h->s[k].reporting = REP_NONE;
		h->s[k].interval_ms = 100;
		h->s[k].sensitivity = kinds[k].sens_default;
	}
	h->fd = open("/dev/uhid", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (h->fd < 0) {
		logf_("error: open /dev/uhid: %s", strerror(errno));
		return -1;
	}
	snprintf(h->name, sizeof(h->name), "%s", name);
	build_descriptor(h, &b);
	memset(&ev, 0, sizeof(ev));
	ev.type = UHID_CREATE2;
	snprintf((char *)ev.u.create2.name, sizeof(ev.u.create2.name), "%s", name);
	snprintf((char *)ev.u.create2.phys, sizeof(ev.u.create2.phys), "uhid/%s", name);
	ev.u.create2.rd_size = (uint16_t)b.n;
	ev.u.create2.bus = 0x03;        /* BUS_USB, like most hubs */
	ev.u.create2.vendor = 0x1209;   /* pid.codes test vendor: matches no quirk */
	ev.u.create2.product = 0x5053;
	ev.u.create2.version = 1;
	memcpy(ev.u.create2.rd_data, b.d, b.n);
	h->used = 1;
	if (uhid_write(h, &ev) < 0) {
		close(h->fd);
		memset(h, 0, sizeof(*h));
		return -1;
	}
	logf_("%s: created (%d-byte report descriptor)", name, b.n);
	return 0;
}

/* ---- traces --------------------------------------------------------------- */

static int load_trace(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;
	if (!f) {
		logf_("error: play %s: %s", path, strerror(errno));
		return -1;
	}
	free(trace);
	trace = NULL;
	trace_len = 0;
	while (fgets(line, sizeof(line), f)) {
		double v[7];
		int n = sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]);
		if (n != 4 && n != 7)
			continue; /* header or comment */
		if (trace_len == cap) {
			cap = cap ? cap * 2 : 256;
			trace = realloc(trace, cap * sizeof(*trace));
			if (!trace) {
				fclose(f);
				return -1;
			}
		}
		trace[trace_len].t = v[0];
		trace[trace_len].ncol = n;
		for (int i = 0; i < 6; i++)
			trace[trace_len].v[i] = i + 1 < n ? v[i + 1] : 0;
		trace_len++;
	}
	fclose(f);
	if (!trace_len) {
		logf_("error: play %s: no rows", path);
		return -1;
	}
	snprintf(trace_name, sizeof(trace_name), "%s", path);
	trace_pos = 0;
	trace_start = now_ms();
	playing = 1;
	logf_("playing %s: %zu rows over %.3f s", path, trace_len, trace[trace_len - 1].t - trace[0].t);
	return 0;
}

/// Apply the trace row due now; returns the ms until the next row (or -1).
static int64_t advance_trace(int64_t now)
{
	double el;
	if (!playing)
		return -1;
	el = (now - trace_start) / 1000.0 + trace[0].t;
	while (trace_pos + 1 < trace_len && trace[trace_pos + 1].t <= el)
		trace_pos++;
	for (int a = 0; a < 3; a++) {
		w_accel[a] = trace[trace_pos].v[a];
		if (trace[trace_pos].ncol == 7)
			w_gyro[a] = trace[trace_pos].v[3 + a];
	}
	if (trace_pos + 1 >= trace_len) {
		playing = 0;
		logf_("trace %s finished; holding its last values", trace_name);
		write_status();
		return -1;
	}
	return (int64_t)((trace[trace_pos + 1].t - el) * 1000.0) + 1;
}

/* ---- commands ------------------------------------------------------------- */

static void command(char *line)
{
	char *argv[16], echo[4096]; /* as long as the line buffer */
	int argc = 0;
	char *p = strchr(line, '#');
	if (p)
		*p = 0;
	snprintf(echo, sizeof(echo), "%s", line);
	for (p = echo + strlen(echo); p > echo && strchr(" \t\r\n", p[-1]); p--)
		p[-1] = 0;
	for (p = strtok(line, " \t\r\n"); p && argc < 16; p = strtok(NULL, " \t\r\n"))
		argv[argc++] = p;
	if (!argc)
		return;
#define NUM(i) strtod(argv[i], NULL)
	if (!strcmp(argv[0], "create") && argc >= 3) {
		create_hub(argv[1], argv + 2, argc - 2);
	} else if (!strcmp(argv[0], "destroy") && argc == 2) {
		struct hub *h = find_hub(argv[1]);
		if (h)
			destroy_hub(h);
		else
			logf_("error: no hub %s", argv[1]);
	} else if (!strcmp(argv[0], "accel") && argc == 4) {
		for (int a = 0; a < 3; a++)
			w_accel[a] = NUM(a + 1);
		playing = 0;
	} else if (!strcmp(argv[0], "gyro") && argc == 4) {
		for (int a = 0; a < 3; a++)
			w_gyro[a] = NUM(a + 1);
	} else if (!strcmp(argv[0], "als") && argc == 2) {
		w_lux = NUM(1);
	} else if (!strcmp(argv[0], "compass") && argc == 2) {
		w_heading = NUM(1);
	} else if (!strcmp(argv[0], "prox") && argc == 2) {
		w_near = !strcasecmp(argv[1], "near") || !strcmp(argv[1], "1");
	} else if (!strcmp(argv[0], "play") && argc == 2) {
		load_trace(argv[1]);
	} else if (!strcmp(argv[0], "stop") && argc == 1) {
		playing = 0;
	} else if (!strcmp(argv[0], "noise") && argc == 2) {
		noise_on = !strcmp(argv[1], "on");
	} else if (!strcmp(argv[0], "status") && argc == 1) {
		/* written below */
	} else if (!strcmp(argv[0], "quit") && argc == 1) {
		quitting = 1;
	} else {
		logf_("error: bad command: %s", echo);
		return;
	}
	logf_("command: %s", echo);
	write_status();
}

static void on_signal(int sig)
{
	(void)sig;
	quitting = 1;
}

int main(int argc, char **argv)
{
	const char *control = NULL;
	int cfd = 0;
	char lbuf[4096];
	size_t llen = 0;
	int64_t next_status;
	struct stat st;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--control") && i + 1 < argc)
			control = argv[++i];
		else if (!strcmp(argv[i], "--status") && i + 1 < argc)
			status_path = argv[++i];
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else {
			fprintf(stderr, "usage: %s [--control FIFO] [--status FILE] [--quiet]\n", argv[0]);
			return 2;
		}
	}
	t0 = now_ms();
	srand((unsigned)t0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (control) {
		if (mkfifo(control, 0600) < 0 && errno != EEXIST) {
			fprintf(stderr, "mkfifo %s: %s\n", control, strerror(errno));
			return 1;
		}
		/* O_RDWR: we hold a writer ourselves, so writers coming and going
		 * never give us end-of-file */
		cfd = open(control, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (cfd < 0 || fstat(cfd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
			fprintf(stderr, "%s: cannot open as a FIFO: %s\n", control,
				cfd < 0 ? strerror(errno) : "not a FIFO");
			return 1;
		}
	}
	logf_("hid-sensor-hub ready (control %s, status %s)", control ? control : "stdin",
	      status_path ? status_path : "none");
	write_status();
	next_status = now_ms() + 1000;

	while (!quitting) {
		struct pollfd pf[MAX_HUBS + 1];
		struct hub *ph[MAX_HUBS + 1];
		int n = 0, timeout;
		int64_t now = now_ms(), wake = next_status, t;

		pf[n].fd = cfd;
		pf[n].events = POLLIN;
		ph[n++] = NULL;
		for (int i = 0; i < MAX_HUBS; i++) {
			if (!hubs[i].used)
				continue;
			pf[n].fd = hubs[i].fd;
			pf[n].events = POLLIN;
			ph[n++] = &hubs[i];
			for (int k = 0; k < NKINDS; k++)
				if (hubs[i].s[k].active && hubs[i].s[k].next_due < wake)
					wake = hubs[i].s[k].next_due;
		}
		t = advance_trace(now);
		if (t >= 0 && now + t < wake)
			wake = now + t;
		timeout = wake > now ? (int)(wake - now) : 0;
		if (poll(pf, n, timeout) < 0 && errno != EINTR)
			break;
		for (int i = 1; i < n; i++)
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
				handle_uhid(ph[i]);
		if (pf[0].revents & (POLLIN | POLLHUP)) {
			ssize_t r = read(cfd, lbuf + llen, sizeof(lbuf) - 1 - llen);
			if (r == 0 && !control) {
				quitting = 1; /* stdin closed */
			} else if (r > 0) {
				char *nl;
				llen += r;
				lbuf[llen] = 0;
				while ((nl = memchr(lbuf, '\n', llen))) {
					*nl = 0;
					command(lbuf);
					llen -= nl + 1 - lbuf;
					memmove(lbuf, nl + 1, llen);
				}
				if (llen == sizeof(lbuf) - 1)
					llen = 0; /* an absurdly long line: drop it */
			}
		}
		now = now_ms();
		for (int i = 0; i < MAX_HUBS; i++)
			if (hubs[i].used)
				tick(&hubs[i], now);
		if (now >= next_status) {
			write_status();
			next_status = now + 1000;
		}
	}
	for (int i = 0; i < MAX_HUBS; i++)
		if (hubs[i].used)
			destroy_hub(&hubs[i]);
	write_status();
	logf_("bye");
	return 0;
}
