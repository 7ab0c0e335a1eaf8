/* sd-bus for orientd's net.hadess.SensorProxy front end: what Swift cannot import from
 * <systemd/sd-bus.h> (the vtable macros and the variadic calls), as typed functions.
 *
 * Ownership: every function here runs on the thread that owns the bus (sd-bus is not
 * thread-safe). Messages passed in are borrowed; nothing here keeps a reference. */
#ifndef ORIENTD_SDBUS_H
#define ORIENTD_SDBUS_H

#include <systemd/sd-bus.h>
#include <sys/types.h>

/* net.hadess.SensorProxy's objects, properties and methods come from the Swift side's one table
 * (SensorProxyTable.swift); nothing here names a property or a sensor. */

/* An object: its path and interface. */
typedef struct {
    const char *path;
    const char *interface;
} orientd_sp_object_spec;

/* A property: its name, its D-Bus type ('b', 's' or 'd') and the index of its object. */
typedef struct {
    const char *name;
    char type;
    int object;
} orientd_sp_property_spec;

/* A method (no arguments, no return values) and the index of its object. */
typedef struct {
    const char *name;
    int object;
} orientd_sp_method_spec;

/* A property's value; the member its type names is the one read. A string is the caller's, and
 * must stay valid until the value is set again or the object is freed. */
typedef struct {
    int boolean;
    double number;
    const char *string;
} orientd_sp_value;

/* Called on the bus thread for every method call, with the method's index in the table. Return 1
 * when the call was answered or kept (sd_bus_message_ref, answered later), or a negative errno
 * (sd-bus then answers with an error). */
typedef int (*orientd_sp_method_handler)(sd_bus_message *call, int method, void *context);

/* The served objects: the table (copied), the values (read by Get and GetAll straight from here),
 * the vtables built from the table, and the handler for method calls. */
typedef struct orientd_sp_object orientd_sp_object;

/* Builds the objects from the table; every value starts as false, 0 or "". NULL when out of memory. */
orientd_sp_object *orientd_sp_object_new(const orientd_sp_object_spec *objects, int object_count,
                                          const orientd_sp_property_spec *properties, int property_count,
                                          const orientd_sp_method_spec *methods, int method_count,
                                          orientd_sp_method_handler handler, void *context);
void orientd_sp_object_free(orientd_sp_object *object);

/* Who hears method calls (set before the objects are added). */
void orientd_sp_object_set_handler(orientd_sp_object *object, orientd_sp_method_handler handler, void *context);

/* The value of property `index` (its member by the property's type). */
void orientd_sp_set_value(orientd_sp_object *object, int index, orientd_sp_value value);

/* Adds every object with its interface; `slots` gets one slot per object. On failure none stays. */
int orientd_sp_add_objects(sd_bus *bus, orientd_sp_object *object, sd_bus_slot **slots);

/* org.freedesktop.DBus.Properties.PropertiesChanged of the properties whose bit (1 << index) is in
 * `changed`, sent to `destination` only (a unicast signal; systemd 252 has no
 * sd_bus_emit_signal_to): one signal per object that has any. */
int orientd_sp_emit_changed(sd_bus *bus, const orientd_sp_object *object, const char *destination, unsigned long changed);

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

/* A filter that answers InvalidArgs to a call of the standard interfaces sd-bus serves itself
 * (org.freedesktop.DBus.Properties, Peer, Introspectable) whose arguments are not the ones the
 * method takes: sd-bus 252 reads what it needs and ignores the rest, where GDBus (and so
 * iio-sensor-proxy) refuses the call. Runs before sd-bus dispatches the message. */
int orientd_bus_check_standard_arguments(sd_bus *bus, sd_bus_slot **slot);

/* NameLost of the bus driver (our well-known name was taken over). */
int orientd_bus_watch_name_lost(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata);
int orientd_bus_read_string(sd_bus_message *message, const char **value);

/* The sender's effective uid and gid and its pid, asked of the bus driver. 0 on success, negative
 * errno otherwise. */
int orientd_bus_sender_identity(sd_bus_message *call, uid_t *uid, gid_t *gid, pid_t *pid);

/* logind (org.freedesktop.login1): sleep, for the daemon's sleep watch (SleepWatch.swift). */

/* PrepareForSleep of logind's manager (the match added without waiting for the bus's answer); the
 * callback reads its one boolean with
 * orientd_bus_read_boolean (true: the system is about to sleep; false: it has resumed). */
int orientd_logind_watch_sleep(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata);
int orientd_bus_read_boolean(sd_bus_message *message, int *value);

/* Inhibit("sleep", who, why, "delay"), answered to `callback`; the reply's descriptor is read with
 * orientd_logind_read_inhibitor. */
int orientd_logind_inhibit_sleep_async(sd_bus *bus, sd_bus_slot **slot, const char *who, const char *why,
                                       sd_bus_message_handler_t callback, void *userdata);

/* The inhibitor's descriptor from Inhibit's reply, duplicated (close-on-exec) so that it outlives
 * the message: the caller owns it and closing it releases the delay. Negative errno when the reply
 * is an error or holds no descriptor; `error_name` then points at the error's name (the
 * message's), or is NULL. */
int orientd_logind_read_inhibitor(sd_bus_message *reply, const char **error_name, const char **error_message);

#endif
