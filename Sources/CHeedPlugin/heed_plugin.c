/* heed_plugin.c: the C plugin helper over json-c. The raw json-c calls are all in this file. */
#define _GNU_SOURCE
#include "heed_plugin.h"

#include <json.h>
#include <stdlib.h>
#include <string.h>

struct heed_request {
    struct json_object *root;
};

static struct json_object *member(struct json_object *object, const char *key) {
    struct json_object *value = NULL;
    if (object == NULL || !json_object_is_type(object, json_type_object)) return NULL;
    if (!json_object_object_get_ex(object, key, &value)) return NULL;
    return value;
}

static const char *member_string(struct json_object *object, const char *key) {
    struct json_object *value = member(object, key);
    return value != NULL && json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
}

heed_request *heed_parse_request(const char *line) {
    struct json_object *root = json_tokener_parse(line);
    if (root == NULL) return NULL;
    if (member_string(root, "op") == NULL || member(root, "id") == NULL) {
        json_object_put(root);
        return NULL;
    }
    heed_request *request = malloc(sizeof *request);
    if (request == NULL) {
        json_object_put(root);
        return NULL;
    }
    request->root = root;
    return request;
}

heed_request *heed_read_request(FILE *input) {
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, input)) >= 0) {
        while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = '\0';
        if (length == 0) continue;
        heed_request *request = heed_parse_request(line);
        if (request != NULL) {
            free(line);
            return request;
        }
        fprintf(stderr, "heed_plugin: ignoring a line that is not a request\n");
    }
    free(line);
    return NULL;
}

void heed_request_free(heed_request *request) {
    if (request == NULL) return;
    json_object_put(request->root);
    free(request);
}

long long heed_request_id(const heed_request *request) {
    return (long long)json_object_get_int64(member(request->root, "id"));
}

const char *heed_request_op(const heed_request *request) { return member_string(request->root, "op"); }

int heed_request_is(const heed_request *request, const char *op) {
    const char *actual = heed_request_op(request);
    return actual != NULL && strcmp(actual, op) == 0;
}

const char *heed_request_intent(const heed_request *request) {
    return member_string(member(request->root, "intent"), "name");
}

const char *heed_request_parameter(const heed_request *request) { return member_string(request->root, "parameter"); }

int heed_request_user_choice(const heed_request *request) {
    struct json_object *value = member(request->root, "userChoice");
    return value != NULL && json_object_get_boolean(value);
}

int heed_request_protocol_version(const heed_request *request) {
    return json_object_get_int(member(request->root, "serializationVersion"));
}

struct json_object *heed_request_parameters(const heed_request *request) {
    return member(member(request->root, "intent"), "parameters");
}

static struct json_object *parameter(const heed_request *request, const char *name) {
    struct json_object *value = member(heed_request_parameters(request), name);
    return value != NULL && !json_object_is_type(value, json_type_null) ? value : NULL;
}

int heed_param_has(const heed_request *request, const char *name) { return parameter(request, name) != NULL; }

const char *heed_param_string(const heed_request *request, const char *name) {
    struct json_object *value = parameter(request, name);
    return value != NULL && json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
}

int heed_param_number(const heed_request *request, const char *name, double *out) {
    struct json_object *value = parameter(request, name);
    if (value == NULL || !(json_object_is_type(value, json_type_int) || json_object_is_type(value, json_type_double)))
        return 0;
    *out = json_object_get_double(value);
    return 1;
}

int heed_param_bool(const heed_request *request, const char *name, int *out) {
    struct json_object *value = parameter(request, name);
    if (value == NULL || !json_object_is_type(value, json_type_boolean)) return 0;
    *out = json_object_get_boolean(value);
    return 1;
}

/* Writes `object` as one line, flushes, and releases it. */
static int emit(FILE *output, struct json_object *object) {
    const char *text = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    int result = (fputs(text, output) >= 0 && fputc('\n', output) != EOF && fflush(output) == 0) ? 0 : -1;
    json_object_put(object);
    return result;
}

static struct json_object *reply(const heed_request *request, const char *type) {
    struct json_object *object = json_object_new_object();
    json_object_object_add(object, "id", json_object_new_int64(heed_request_id(request)));
    json_object_object_add(object, "type", json_object_new_string(type));
    return object;
}

static struct json_object *outcome(const heed_request *request, const char *type, const char *name) {
    struct json_object *object = reply(request, type);
    json_object_object_add(object, "outcome", json_object_new_string(name));
    return object;
}

int heed_reply_hello(FILE *output, const heed_request *request, const char *app_id, const char *const *intents,
                     size_t intent_count) {
    struct json_object *object = reply(request, "hello");
    json_object_object_add(object, "serializationVersion", json_object_new_int(HEED_PLUGIN_PROTOCOL_VERSION));
    json_object_object_add(object, "appId", json_object_new_string(app_id));
    struct json_object *list = json_object_new_array();
    for (size_t index = 0; index < intent_count; index++)
        json_object_array_add(list, json_object_new_string(intents[index]));
    json_object_object_add(object, "intents", list);
    return emit(output, object);
}

int heed_reply_resolve_success_value(FILE *output, const heed_request *request, struct json_object *value) {
    struct json_object *object = outcome(request, "resolve", "success");
    json_object_object_add(object, "value", json_object_get(value));
    return emit(output, object);
}

int heed_reply_resolve_success_string(FILE *output, const heed_request *request, const char *value) {
    struct json_object *object = outcome(request, "resolve", "success");
    json_object_object_add(object, "value", json_object_new_string(value));
    return emit(output, object);
}

int heed_reply_resolve_success_number(FILE *output, const heed_request *request, double value) {
    struct json_object *object = outcome(request, "resolve", "success");
    json_object_object_add(object, "value", json_object_new_double(value));
    return emit(output, object);
}

int heed_reply_resolve_disambiguation_strings(FILE *output, const heed_request *request, const char *const *values,
                                              size_t count) {
    struct json_object *object = outcome(request, "resolve", "disambiguation");
    struct json_object *list = json_object_new_array();
    for (size_t index = 0; index < count; index++) json_object_array_add(list, json_object_new_string(values[index]));
    json_object_object_add(object, "values", list);
    return emit(output, object);
}

int heed_reply_resolve_confirmation_required_string(FILE *output, const heed_request *request, const char *value) {
    struct json_object *object = outcome(request, "resolve", "confirmationRequired");
    json_object_object_add(object, "value", json_object_new_string(value));
    return emit(output, object);
}

int heed_reply_resolve_needs_value(FILE *output, const heed_request *request) {
    return emit(output, outcome(request, "resolve", "needsValue"));
}

int heed_reply_resolve_not_required(FILE *output, const heed_request *request) {
    return emit(output, outcome(request, "resolve", "notRequired"));
}

int heed_reply_resolve_unsupported(FILE *output, const heed_request *request, const char *reason) {
    struct json_object *object = outcome(request, "resolve", "unsupported");
    json_object_object_add(object, "reason", json_object_new_string(reason));
    return emit(output, object);
}

int heed_reply_resolve_default(FILE *output, const heed_request *request) {
    const char *name = heed_request_parameter(request);
    struct json_object *value = name != NULL ? parameter(request, name) : NULL;
    return value != NULL ? heed_reply_resolve_success_value(output, request, value)
                         : heed_reply_resolve_needs_value(output, request);
}

int heed_reply_confirm_ready(FILE *output, const heed_request *request) {
    return emit(output, outcome(request, "confirm", "ready"));
}

int heed_reply_confirm_failure(FILE *output, const heed_request *request, const char *reason) {
    struct json_object *object = outcome(request, "confirm", "failure");
    json_object_object_add(object, "reason", json_object_new_string(reason));
    return emit(output, object);
}

int heed_reply_handle(FILE *output, const heed_request *request, heed_handle_status status, const char *response) {
    static const char *const names[] = {"success", "failure", "inProgress"};
    struct json_object *object = outcome(request, "handle", names[status <= HEED_HANDLE_IN_PROGRESS ? status : 1]);
    if (response != NULL) json_object_object_add(object, "response", json_object_new_string(response));
    return emit(output, object);
}

int heed_reply_error(FILE *output, const heed_request *request, const char *message) {
    struct json_object *object = reply(request, "error");
    json_object_object_add(object, "message", json_object_new_string(message));
    return emit(output, object);
}

int heed_notify(FILE *output, const char *text, const char *intent, const char *event) {
    struct json_object *object = json_object_new_object();
    json_object_object_add(object, "type", json_object_new_string("notification"));
    json_object_object_add(object, "text", json_object_new_string(text));
    if (intent != NULL) json_object_object_add(object, "intent", json_object_new_string(intent));
    if (event != NULL) json_object_object_add(object, "event", json_object_new_string(event));
    return emit(output, object);
}
