/* See include/orientd_sdbus.h. */
#include "orientd_sdbus.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define SENSOR_PROXY_PATH "/net/hadess/SensorProxy"
#define SENSOR_PROXY_INTERFACE "net.hadess.SensorProxy"
#define COMPASS_PATH "/net/hadess/SensorProxy/Compass"
#define COMPASS_INTERFACE "net.hadess.SensorProxy.Compass"

/* The values the interface defines; properties point at these, never at a caller's memory. */
static const char *const orientations[] = { "undefined", "normal", "bottom-up", "left-up", "right-up" };
static const char *const tilts[] = { "undefined", "vertical", "tilted-up", "tilted-down", "face-up", "face-down" };

static const char *known(const char *const *values, size_t count, const char *value) {
    for (size_t i = 0; i < count; i++)
        if (value != NULL && strcmp(values[i], value) == 0) return values[i];
    return NULL;
}

void orientd_sp_object_init(orientd_sp_object *object, orientd_sp_method_handler handler, void *context) {
    memset(object, 0, sizeof *object);
    object->accelerometer_orientation = orientations[0];
    object->accelerometer_tilt = tilts[0];
    object->light_level_unit = "lux";
    object->compass_heading = -1.0;
    object->handler = handler;
    object->context = context;
}

int orientd_sp_set_values(orientd_sp_object *object, int has_accelerometer, const char *orientation, const char *tilt) {
    const char *o = known(orientations, sizeof orientations / sizeof *orientations, orientation);
    const char *t = known(tilts, sizeof tilts / sizeof *tilts, tilt);
    if (o == NULL || t == NULL) return -EINVAL;
    object->has_accelerometer = has_accelerometer != 0;
    object->accelerometer_orientation = o;
    object->accelerometer_tilt = t;
    return 0;
}

static int dispatch(sd_bus_message *call, void *userdata, orientd_sp_method method) {
    orientd_sp_object *object = userdata;
    return object->handler(call, method, object->context);
}

#define METHOD_HANDLER(function, method) \
    static int function(sd_bus_message *call, void *userdata, sd_bus_error *error) { \
        (void)error; \
        return dispatch(call, userdata, method); \
    }
METHOD_HANDLER(claim_accelerometer, ORIENTD_SP_CLAIM_ACCELEROMETER)
METHOD_HANDLER(release_accelerometer, ORIENTD_SP_RELEASE_ACCELEROMETER)
METHOD_HANDLER(claim_light, ORIENTD_SP_CLAIM_LIGHT)
METHOD_HANDLER(release_light, ORIENTD_SP_RELEASE_LIGHT)
METHOD_HANDLER(claim_proximity, ORIENTD_SP_CLAIM_PROXIMITY)
METHOD_HANDLER(release_proximity, ORIENTD_SP_RELEASE_PROXIMITY)
METHOD_HANDLER(claim_compass, ORIENTD_SP_CLAIM_COMPASS)
METHOD_HANDLER(release_compass, ORIENTD_SP_RELEASE_COMPASS)

#define PROPERTY(name, signature, field) \
    SD_BUS_PROPERTY(name, signature, NULL, offsetof(orientd_sp_object, field), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define CALL(name, handler) SD_BUS_METHOD(name, "", "", handler, SD_BUS_VTABLE_UNPRIVILEGED)

/* The members and their order as iio-sensor-proxy 3.9's introspection data has them. */
static const sd_bus_vtable sensor_proxy_vtable[] = {
    SD_BUS_VTABLE_START(0),
    PROPERTY("HasAccelerometer", "b", has_accelerometer),
    PROPERTY("AccelerometerOrientation", "s", accelerometer_orientation),
    PROPERTY("AccelerometerTilt", "s", accelerometer_tilt),
    PROPERTY("HasAmbientLight", "b", has_ambient_light),
    PROPERTY("LightLevelUnit", "s", light_level_unit),
    PROPERTY("LightLevel", "d", light_level),
    PROPERTY("HasProximity", "b", has_proximity),
    PROPERTY("ProximityNear", "b", proximity_near),
    CALL("ClaimAccelerometer", claim_accelerometer),
    CALL("ReleaseAccelerometer", release_accelerometer),
    CALL("ClaimLight", claim_light),
    CALL("ReleaseLight", release_light),
    CALL("ClaimProximity", claim_proximity),
    CALL("ReleaseProximity", release_proximity),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable compass_vtable[] = {
    SD_BUS_VTABLE_START(0),
    PROPERTY("HasCompass", "b", has_compass),
    PROPERTY("CompassHeading", "d", compass_heading),
    CALL("ClaimCompass", claim_compass),
    CALL("ReleaseCompass", release_compass),
    SD_BUS_VTABLE_END,
};

int orientd_sp_add_objects(sd_bus *bus, orientd_sp_object *object, sd_bus_slot **main_slot, sd_bus_slot **compass_slot) {
    int r = sd_bus_add_object_vtable(bus, main_slot, SENSOR_PROXY_PATH, SENSOR_PROXY_INTERFACE, sensor_proxy_vtable, object);
    if (r < 0) return r;
    r = sd_bus_add_object_vtable(bus, compass_slot, COMPASS_PATH, COMPASS_INTERFACE, compass_vtable, object);
    if (r < 0) {
        *main_slot = sd_bus_slot_unref(*main_slot);
        return r;
    }
    return 0;
}

void orientd_sp_set_other_values(orientd_sp_object *object, int has_light, int vendor_unit, double level, int has_proximity,
                                 int near, int has_compass, double heading) {
    object->has_ambient_light = has_light != 0;
    object->light_level_unit = vendor_unit ? "vendor" : "lux";
    object->light_level = level;
    object->has_proximity = has_proximity != 0;
    object->proximity_near = near != 0;
    object->has_compass = has_compass != 0;
    object->compass_heading = heading;
}

/* Appends {sv} for one boolean, string or double property when its bit is in `changed`. */
#define APPEND_IF(bit, name, type, value) \
    if ((changed & (bit)) && (r = sd_bus_message_append(m, "{sv}", name, type, value)) < 0) goto out;

/* One PropertiesChanged of `interface` at `path` for `destination` alone, holding the properties of
 * `object` whose bits are in `changed`: those of the main object, or the compass's. */
static int emit_properties(sd_bus *bus, const orientd_sp_object *object, const char *destination, int changed,
                           const char *path, const char *interface) {
    sd_bus_message *m = NULL;
    int r = sd_bus_message_new_signal(bus, &m, path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
    if (r < 0) return r;
    if ((r = sd_bus_message_set_destination(m, destination)) < 0) goto out;
    if ((r = sd_bus_message_append(m, "s", interface)) < 0) goto out;
    if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0) goto out;
    APPEND_IF(ORIENTD_SP_CHANGED_HAS_ACCELEROMETER, "HasAccelerometer", "b", object->has_accelerometer)
    APPEND_IF(ORIENTD_SP_CHANGED_ORIENTATION, "AccelerometerOrientation", "s", object->accelerometer_orientation)
    APPEND_IF(ORIENTD_SP_CHANGED_TILT, "AccelerometerTilt", "s", object->accelerometer_tilt)
    APPEND_IF(ORIENTD_SP_CHANGED_HAS_AMBIENT_LIGHT, "HasAmbientLight", "b", object->has_ambient_light)
    APPEND_IF(ORIENTD_SP_CHANGED_LIGHT_UNIT, "LightLevelUnit", "s", object->light_level_unit)
    APPEND_IF(ORIENTD_SP_CHANGED_LIGHT_LEVEL, "LightLevel", "d", object->light_level)
    APPEND_IF(ORIENTD_SP_CHANGED_HAS_PROXIMITY, "HasProximity", "b", object->has_proximity)
    APPEND_IF(ORIENTD_SP_CHANGED_PROXIMITY_NEAR, "ProximityNear", "b", object->proximity_near)
    APPEND_IF(ORIENTD_SP_CHANGED_HAS_COMPASS, "HasCompass", "b", object->has_compass)
    APPEND_IF(ORIENTD_SP_CHANGED_COMPASS_HEADING, "CompassHeading", "d", object->compass_heading)
    if ((r = sd_bus_message_close_container(m)) < 0) goto out;
    if ((r = sd_bus_message_append(m, "as", 0)) < 0) goto out;
    r = sd_bus_send(bus, m, NULL);
out:
    sd_bus_message_unref(m);
    return r < 0 ? r : 0;
}

int orientd_sp_emit_changed(sd_bus *bus, const orientd_sp_object *object, const char *destination, int changed) {
    const int compass = ORIENTD_SP_CHANGED_HAS_COMPASS | ORIENTD_SP_CHANGED_COMPASS_HEADING;
    int r = 0;
    if (changed & ~compass) r = emit_properties(bus, object, destination, changed & ~compass, SENSOR_PROXY_PATH, SENSOR_PROXY_INTERFACE);
    if (r >= 0 && (changed & compass)) r = emit_properties(bus, object, destination, changed & compass, COMPASS_PATH, COMPASS_INTERFACE);
    return r;
}

int orientd_bus_reply_empty(sd_bus_message *call) {
    return sd_bus_reply_method_return(call, NULL);
}

int orientd_bus_reply_error(sd_bus_message *call, const char *name, const char *message) {
    sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(name, message);
    return sd_bus_reply_method_error(call, &error);
}

int orientd_bus_check_authorization_async(sd_bus *bus, sd_bus_slot **slot, const char *sender, const char *action,
                                          sd_bus_message_handler_t callback, void *userdata) {
    sd_bus_message *m = NULL;
    int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
    if (r < 0) return r;
    /* subject (system-bus-name, {name: sender}), action, details {}, flags 0 (no interaction), cancellation id "" */
    if ((r = sd_bus_message_append(m, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, action)) < 0) goto out;
    if ((r = sd_bus_message_append(m, "a{ss}us", 0, 0u, "")) < 0) goto out;
    r = sd_bus_call_async(bus, slot, m, callback, userdata, 10 * 1000 * 1000);
out:
    sd_bus_message_unref(m);
    return r;
}

int orientd_bus_read_authorization(sd_bus_message *reply) {
    int authorized = 0, challenge = 0;
    int r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
    if (r < 0) return r;
    r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
    if (r < 0) return r;
    return authorized ? 1 : 0;
}

int orientd_bus_watch_name_owners(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata) {
    return sd_bus_match_signal(bus, slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameOwnerChanged", callback, userdata);
}

int orientd_bus_read_name_owner_changed(sd_bus_message *signal, const char **name, const char **old_owner, const char **new_owner) {
    return sd_bus_message_read(signal, "sss", name, old_owner, new_owner);
}

int orientd_bus_watch_name_lost(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata) {
    return sd_bus_match_signal(bus, slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameLost", callback, userdata);
}

int orientd_bus_read_string(sd_bus_message *message, const char **value) {
    return sd_bus_message_read(message, "s", value);
}

int orientd_bus_sender_identity(sd_bus_message *call, uid_t *uid, gid_t *gid, pid_t *pid) {
    sd_bus_creds *creds = NULL;
    int r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &creds);
    if (r < 0) return r;
    r = sd_bus_creds_get_euid(creds, uid);
    /* The bus driver tells the uid; the gid sd-bus reads from /proc/PID/status, which the unit's
       ProtectProc=invisible hides for other users' processes. Without it the group is decided from
       the user's group list alone. */
    if (r >= 0 && sd_bus_creds_get_egid(creds, gid) < 0) *gid = (gid_t)-1;
    if (r >= 0 && sd_bus_creds_get_pid(creds, pid) < 0) *pid = 0;
    sd_bus_creds_unref(creds);
    return r < 0 ? r : 0;
}
