/* sd-bus for orientd's net.hadess.SensorProxy front end: what Swift cannot import from
 * <systemd/sd-bus.h> (the vtable macros and the variadic calls), as typed functions.
 *
 * Ownership: every function here runs on the thread that owns the bus (sd-bus is not
 * thread-safe). Messages passed in are borrowed; nothing here keeps a reference. */
#ifndef ORIENTD_SDBUS_H
#define ORIENTD_SDBUS_H

#include <systemd/sd-bus.h>
#include <sys/types.h>

/* The methods of the two objects, as the front end's handler sees them. */
typedef enum {
    ORIENTD_SP_CLAIM_ACCELEROMETER = 0,
    ORIENTD_SP_RELEASE_ACCELEROMETER,
    ORIENTD_SP_CLAIM_LIGHT,
    ORIENTD_SP_RELEASE_LIGHT,
    ORIENTD_SP_CLAIM_PROXIMITY,
    ORIENTD_SP_RELEASE_PROXIMITY,
    ORIENTD_SP_CLAIM_COMPASS,
    ORIENTD_SP_RELEASE_COMPASS,
} orientd_sp_method;

/* Called on the bus thread for every method call. Return 1 when the call was answered or kept
 * (sd_bus_message_ref, answered later), or a negative errno (sd-bus then answers with an error). */
typedef int (*orientd_sp_method_handler)(sd_bus_message *call, orientd_sp_method method, void *context);

/* The served objects' state: the property values (read by Get and GetAll straight from here) and
 * the handler for method calls. Allocated and owned by the caller; it must outlive the slots. */
typedef struct {
    int has_accelerometer;
    const char *accelerometer_orientation; /* one of the static strings set by orientd_sp_set_values */
    const char *accelerometer_tilt;
    int has_ambient_light;
    const char *light_level_unit;
    double light_level;
    int has_proximity;
    int proximity_near;
    int has_compass;
    double compass_heading;
    orientd_sp_method_handler handler;
    void *context;
} orientd_sp_object;

/* Fills `object` with the values of a daemon that has no accelerometer yet. */
void orientd_sp_object_init(orientd_sp_object *object, orientd_sp_method_handler handler, void *context);

/* Sets the accelerometer's values. Unknown strings are refused with -EINVAL (nothing changes). */
int orientd_sp_set_values(orientd_sp_object *object, int has_accelerometer, const char *orientation, const char *tilt);

/* Sets the other kinds' values: light (unit 0 lux, 1 vendor), proximity, compass. */
void orientd_sp_set_other_values(orientd_sp_object *object, int has_light, int vendor_unit, double level, int has_proximity,
                                 int near, int has_compass, double heading);

/* Adds /net/hadess/SensorProxy and /net/hadess/SensorProxy/Compass with their interfaces. */
int orientd_sp_add_objects(sd_bus *bus, orientd_sp_object *object, sd_bus_slot **main_slot, sd_bus_slot **compass_slot);

/* Which properties a PropertiesChanged names (the bits of SensorProxyValues.Changes). */
enum {
    ORIENTD_SP_CHANGED_HAS_ACCELEROMETER = 1,
    ORIENTD_SP_CHANGED_ORIENTATION = 2,
    ORIENTD_SP_CHANGED_TILT = 4,
    ORIENTD_SP_CHANGED_HAS_AMBIENT_LIGHT = 8,
    ORIENTD_SP_CHANGED_LIGHT_LEVEL = 16,
    ORIENTD_SP_CHANGED_LIGHT_UNIT = 32,
    ORIENTD_SP_CHANGED_HAS_PROXIMITY = 64,
    ORIENTD_SP_CHANGED_PROXIMITY_NEAR = 128,
    ORIENTD_SP_CHANGED_HAS_COMPASS = 256,
    ORIENTD_SP_CHANGED_COMPASS_HEADING = 512,
};

/* org.freedesktop.DBus.Properties.PropertiesChanged of the `changed` properties, sent to
 * `destination` only (a unicast signal; systemd 252 has no sd_bus_emit_signal_to): one signal for
 * the main object's, one for the compass object's. */
int orientd_sp_emit_changed(sd_bus *bus, const orientd_sp_object *object, const char *destination, int changed);

/* An empty method return, and an error return. */
int orientd_bus_reply_empty(sd_bus_message *call);
int orientd_bus_reply_error(sd_bus_message *call, const char *name, const char *message);

/* polkit: org.freedesktop.PolicyKit1.Authority.CheckAuthorization for the bus name `sender` and
 * `action`, without interaction; `callback` gets the reply. */
int orientd_bus_check_authorization_async(sd_bus *bus, sd_bus_slot **slot, const char *sender, const char *action,
                                          sd_bus_message_handler_t callback, void *userdata);

/* Reads CheckAuthorization's reply: 1 authorized, 0 not, negative errno when it is not one. */
int orientd_bus_read_authorization(sd_bus_message *reply);

/* NameOwnerChanged of the bus driver; the callback reads it with orientd_bus_read_name_owner_changed. */
int orientd_bus_watch_name_owners(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata);
int orientd_bus_read_name_owner_changed(sd_bus_message *signal, const char **name, const char **old_owner, const char **new_owner);

/* NameLost of the bus driver (our well-known name was taken over). */
int orientd_bus_watch_name_lost(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata);
int orientd_bus_read_string(sd_bus_message *message, const char **value);

/* The sender's effective uid and gid and its pid, asked of the bus driver. 0 on success, negative
 * errno otherwise. */
int orientd_bus_sender_identity(sd_bus_message *call, uid_t *uid, gid_t *gid, pid_t *pid);

#endif
