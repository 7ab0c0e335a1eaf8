/* See include/orientd_sdbus.h. */
#include "orientd_sdbus.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

struct orientd_sp_object {
    int object_count, property_count, method_count;
    orientd_sp_object_spec *objects;
    orientd_sp_property_spec *properties;
    orientd_sp_method_spec *methods;
    orientd_sp_value *values;
    sd_bus_vtable **vtables; /* one per object */
    orientd_sp_method_handler handler;
    void *context;
};

static char *copy(const char *text) {
    return text == NULL ? NULL : strdup(text);
}

/* The index of the property `name` of `interface`, or -1. */
static int property_index(const orientd_sp_object *object, const char *interface, const char *name) {
    for (int i = 0; i < object->property_count; i++) {
        const orientd_sp_property_spec *p = &object->properties[i];
        if (strcmp(p->name, name) == 0 && strcmp(object->objects[p->object].interface, interface) == 0) return i;
    }
    return -1;
}

static int append_value(sd_bus_message *m, char type, orientd_sp_value value) {
    switch (type) {
    case 'b': return sd_bus_message_append(m, "b", value.boolean != 0);
    case 's': return sd_bus_message_append(m, "s", value.string != NULL ? value.string : "");
    case 'd': return sd_bus_message_append(m, "d", value.number);
    default: return -EINVAL;
    }
}

static int get_property(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                        void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)error;
    const orientd_sp_object *object = userdata;
    int i = property_index(object, interface, property);
    if (i < 0) return -ENOENT;
    return append_value(reply, object->properties[i].type, object->values[i]);
}

static int call_method(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    (void)error;
    orientd_sp_object *object = userdata;
    const char *member = sd_bus_message_get_member(call), *interface = sd_bus_message_get_interface(call);
    for (int i = 0; member != NULL && interface != NULL && i < object->method_count; i++) {
        const orientd_sp_method_spec *method = &object->methods[i];
        if (strcmp(method->name, member) == 0 && strcmp(object->objects[method->object].interface, interface) == 0)
            return object->handler != NULL ? object->handler(call, i, object->context) : -ENOSYS;
    }
    return -ENOENT;
}

static const char *signature(char type) {
    switch (type) {
    case 'b': return "b";
    case 's': return "s";
    default: return "d";
    }
}

void orientd_sp_object_free(orientd_sp_object *object) {
    if (object == NULL) return;
    for (int i = 0; object->objects != NULL && i < object->object_count; i++) {
        free((char *)object->objects[i].path);
        free((char *)object->objects[i].interface);
        if (object->vtables != NULL) free(object->vtables[i]);
    }
    for (int i = 0; object->properties != NULL && i < object->property_count; i++) free((char *)object->properties[i].name);
    for (int i = 0; object->methods != NULL && i < object->method_count; i++) free((char *)object->methods[i].name);
    free(object->objects);
    free(object->properties);
    free(object->methods);
    free(object->values);
    free(object->vtables);
    free(object);
}

orientd_sp_object *orientd_sp_object_new(const orientd_sp_object_spec *objects, int object_count,
                                          const orientd_sp_property_spec *properties, int property_count,
                                          const orientd_sp_method_spec *methods, int method_count,
                                          orientd_sp_method_handler handler, void *context) {
    orientd_sp_object *object = calloc(1, sizeof *object);
    if (object == NULL) return NULL;
    object->object_count = object_count;
    object->property_count = property_count;
    object->method_count = method_count;
    object->handler = handler;
    object->context = context;
    object->objects = calloc((size_t)object_count, sizeof *object->objects);
    object->properties = calloc((size_t)property_count, sizeof *object->properties);
    object->methods = calloc((size_t)method_count, sizeof *object->methods);
    object->values = calloc((size_t)property_count, sizeof *object->values);
    object->vtables = calloc((size_t)object_count, sizeof *object->vtables);
    if (object->objects == NULL || object->properties == NULL || object->methods == NULL || object->values == NULL ||
        object->vtables == NULL) goto fail;
    for (int i = 0; i < object_count; i++) {
        object->objects[i].path = copy(objects[i].path);
        object->objects[i].interface = copy(objects[i].interface);
        if (object->objects[i].path == NULL || object->objects[i].interface == NULL) goto fail;
    }
    for (int i = 0; i < property_count; i++) {
        object->properties[i] = properties[i];
        object->properties[i].name = copy(properties[i].name);
        if (object->properties[i].name == NULL || properties[i].object < 0 || properties[i].object >= object_count) goto fail;
    }
    for (int i = 0; i < method_count; i++) {
        object->methods[i] = methods[i];
        object->methods[i].name = copy(methods[i].name);
        if (object->methods[i].name == NULL || methods[i].object < 0 || methods[i].object >= object_count) goto fail;
    }
    /* Each object's vtable: its properties, then its methods, in the table's order (iio-sensor-proxy
       3.9's introspection order). */
    for (int o = 0; o < object_count; o++) {
        sd_bus_vtable *vtable = calloc((size_t)(property_count + method_count + 2), sizeof *vtable);
        if (vtable == NULL) goto fail;
        object->vtables[o] = vtable;
        int n = 0;
        vtable[n++] = (sd_bus_vtable)SD_BUS_VTABLE_START(0);
        for (int i = 0; i < property_count; i++)
            if (object->properties[i].object == o)
                vtable[n++] = (sd_bus_vtable)SD_BUS_PROPERTY(object->properties[i].name, signature(object->properties[i].type),
                                                             get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
        for (int i = 0; i < method_count; i++)
            if (object->methods[i].object == o)
                vtable[n++] = (sd_bus_vtable)SD_BUS_METHOD(object->methods[i].name, "", "", call_method, SD_BUS_VTABLE_UNPRIVILEGED);
        vtable[n++] = (sd_bus_vtable)SD_BUS_VTABLE_END;
    }
    return object;
fail:
    orientd_sp_object_free(object);
    return NULL;
}

void orientd_sp_object_set_handler(orientd_sp_object *object, orientd_sp_method_handler handler, void *context) {
    object->handler = handler;
    object->context = context;
}

void orientd_sp_set_value(orientd_sp_object *object, int index, orientd_sp_value value) {
    if (index >= 0 && index < object->property_count) object->values[index] = value;
}

int orientd_sp_add_objects(sd_bus *bus, orientd_sp_object *object, sd_bus_slot **slots) {
    for (int o = 0; o < object->object_count; o++) {
        int r = sd_bus_add_object_vtable(bus, &slots[o], object->objects[o].path, object->objects[o].interface,
                                         object->vtables[o], object);
        if (r < 0) {
            for (int k = 0; k < o; k++) slots[k] = sd_bus_slot_unref(slots[k]);
            return r;
        }
    }
    return 0;
}

/* One PropertiesChanged of object `o` for `destination` alone, holding its properties whose bits
   are in `changed`. */
static int emit_properties(sd_bus *bus, const orientd_sp_object *object, const char *destination, unsigned long changed, int o) {
    sd_bus_message *m = NULL;
    int r = sd_bus_message_new_signal(bus, &m, object->objects[o].path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
    if (r < 0) return r;
    if ((r = sd_bus_message_set_destination(m, destination)) < 0) goto out;
    if ((r = sd_bus_message_append(m, "s", object->objects[o].interface)) < 0) goto out;
    if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0) goto out;
    for (int i = 0; i < object->property_count; i++) {
        const orientd_sp_property_spec *p = &object->properties[i];
        if (p->object != o || !(changed & (1UL << i))) continue;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0) goto out;
        if ((r = sd_bus_message_append(m, "s", p->name)) < 0) goto out;
        if ((r = sd_bus_message_open_container(m, 'v', signature(p->type))) < 0) goto out;
        if ((r = append_value(m, p->type, object->values[i])) < 0) goto out;
        if ((r = sd_bus_message_close_container(m)) < 0) goto out;
        if ((r = sd_bus_message_close_container(m)) < 0) goto out;
    }
    if ((r = sd_bus_message_close_container(m)) < 0) goto out;
    if ((r = sd_bus_message_append(m, "as", 0)) < 0) goto out;
    r = sd_bus_send(bus, m, NULL);
out:
    sd_bus_message_unref(m);
    return r < 0 ? r : 0;
}

int orientd_sp_emit_changed(sd_bus *bus, const orientd_sp_object *object, const char *destination, unsigned long changed) {
    int r = 0;
    for (int o = 0; o < object->object_count && r >= 0; o++) {
        unsigned long mine = 0;
        for (int i = 0; i < object->property_count; i++)
            if (object->properties[i].object == o) mine |= changed & (1UL << i);
        if (mine) r = emit_properties(bus, object, destination, mine, o);
    }
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

/* The arguments each method of the standard interfaces takes. */
static const struct {
    const char *interface, *member, *signature;
} standard_methods[] = {
    {"org.freedesktop.DBus.Properties", "Get", "ss"},
    {"org.freedesktop.DBus.Properties", "GetAll", "s"},
    {"org.freedesktop.DBus.Properties", "Set", "ssv"},
    {"org.freedesktop.DBus.Peer", "Ping", ""},
    {"org.freedesktop.DBus.Peer", "GetMachineId", ""},
    {"org.freedesktop.DBus.Introspectable", "Introspect", ""},
};

static int check_standard_arguments(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    if (!sd_bus_message_is_method_call(m, NULL, NULL)) return 0;
    const char *interface = sd_bus_message_get_interface(m), *member = sd_bus_message_get_member(m);
    if (interface == NULL || member == NULL) return 0;
    for (size_t i = 0; i < sizeof standard_methods / sizeof standard_methods[0]; i++) {
        if (strcmp(standard_methods[i].interface, interface) != 0 || strcmp(standard_methods[i].member, member) != 0)
            continue;
        const char *given = sd_bus_message_get_signature(m, 1);
        if (given == NULL) given = "";
        if (strcmp(given, standard_methods[i].signature) == 0) return 0;
        int r = sd_bus_reply_method_errorf(m, SD_BUS_ERROR_INVALID_ARGS,
                                           "Invalid arguments '%s' to call %s.%s(), expecting '%s'.", given, interface,
                                           member, standard_methods[i].signature);
        return r < 0 ? r : 1;
    }
    return 0;
}

int orientd_bus_check_standard_arguments(sd_bus *bus, sd_bus_slot **slot) {
    return sd_bus_add_filter(bus, slot, check_standard_arguments, NULL);
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

int orientd_logind_watch_sleep(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t callback, void *userdata) {
    /* Asynchronous: the AddMatch call is not waited for, so a bus that never answers holds up
       nothing (the daemon's start included). */
    return sd_bus_match_signal_async(bus, slot, "org.freedesktop.login1", "/org/freedesktop/login1",
                                     "org.freedesktop.login1.Manager", "PrepareForSleep", callback, NULL, userdata);
}

int orientd_bus_read_boolean(sd_bus_message *message, int *value) {
    return sd_bus_message_read(message, "b", value);
}

int orientd_logind_inhibit_sleep_async(sd_bus *bus, sd_bus_slot **slot, const char *who, const char *why,
                                       sd_bus_message_handler_t callback, void *userdata) {
    sd_bus_message *m = NULL;
    int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.login1", "/org/freedesktop/login1",
                                           "org.freedesktop.login1.Manager", "Inhibit");
    if (r < 0) return r;
    if ((r = sd_bus_message_append(m, "ssss", "sleep", who, why, "delay")) < 0) goto out;
    r = sd_bus_call_async(bus, slot, m, callback, userdata, 10 * 1000 * 1000);
out:
    sd_bus_message_unref(m);
    return r;
}

int orientd_logind_read_inhibitor(sd_bus_message *reply, const char **error_name, const char **error_message) {
    *error_name = NULL;
    *error_message = NULL;
    if (sd_bus_message_is_method_error(reply, NULL)) {
        const sd_bus_error *error = sd_bus_message_get_error(reply);
        if (error != NULL) {
            *error_name = error->name;
            *error_message = error->message;
        }
        int code = sd_bus_message_get_errno(reply);
        return code > 0 ? -code : -EIO;
    }
    int fd = -1;
    int r = sd_bus_message_read(reply, "h", &fd);
    if (r < 0) return r;
    if (r == 0 || fd < 0) return -EBADMSG;
    /* The message owns `fd` and closes it when freed. */
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return own < 0 ? -errno : own;
}
