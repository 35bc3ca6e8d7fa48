/*
 * heed_plugin.h: a small helper for writing Heed handler plugins in C, over json-c.
 *
 * A plugin reads one request per line on stdin and writes one reply per line on stdout
 * (see docs/PLUGINS.md). This helper parses a request and writes the typed replies:
 *
 *     heed_request *request;
 *     while ((request = heed_read_request(stdin)) != NULL) {
 *         if (heed_request_is(request, "hello")) heed_reply_hello(stdout, request, "org.example.notes", intents, 2);
 *         else if (heed_request_is(request, "shutdown")) { heed_request_free(request); break; }
 *         else if (heed_request_is(request, "handle")) heed_reply_handle(stdout, request, HEED_HANDLE_SUCCESS, "Done.");
 *         else heed_reply_resolve_default(stdout, request);   // success with the value, or needsValue
 *         heed_request_free(request);
 *     }
 *
 * Every reply function writes a whole line and flushes; it returns 0, or -1 when writing failed.
 * Strings returned by accessors belong to the request and live until heed_request_free.
 * Write diagnostics to stderr: Heed logs them.
 */
#ifndef HEED_PLUGIN_H
#define HEED_PLUGIN_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The protocol version this helper speaks (PluginProtocol.serializationVersion). */
#define HEED_PLUGIN_PROTOCOL_VERSION 1

struct json_object;

/** A request from Heed. */
typedef struct heed_request heed_request;

/** How handling went. */
typedef enum heed_handle_status {
    HEED_HANDLE_SUCCESS = 0,
    HEED_HANDLE_FAILURE = 1,
    HEED_HANDLE_IN_PROGRESS = 2
} heed_handle_status;

/** Reads the next request line. Returns NULL at end of input; skips lines that are not requests (logged to stderr). */
heed_request *heed_read_request(FILE *input);
/** Parses one request line (without its line break). Returns NULL when it is not a request. */
heed_request *heed_parse_request(const char *line);
void heed_request_free(heed_request *request);

/** The request id; replies carry it. */
long long heed_request_id(const heed_request *request);
/** The op: "hello", "resolve", "confirm", "handle" or "shutdown". */
const char *heed_request_op(const heed_request *request);
/** Whether the op is `op`. */
int heed_request_is(const heed_request *request, const char *op);
/** The intent's name, or NULL for hello and shutdown. */
const char *heed_request_intent(const heed_request *request);
/** For resolve: the parameter to resolve; otherwise NULL. */
const char *heed_request_parameter(const heed_request *request);
/** For resolve: whether the value was picked or confirmed by the user. */
int heed_request_user_choice(const heed_request *request);
/** For hello: the protocol version Heed speaks. */
int heed_request_protocol_version(const heed_request *request);

/** Whether a parameter has a value (present and not null). */
int heed_param_has(const heed_request *request, const char *name);
/** A string parameter, or NULL when absent or not a string. */
const char *heed_param_string(const heed_request *request, const char *name);
/** A number parameter (durations are seconds): 1 and *value set, or 0 when absent or not a number. */
int heed_param_number(const heed_request *request, const char *name, double *value);
/** A boolean parameter: 1 and *value set, or 0 when absent or not a boolean. */
int heed_param_bool(const heed_request *request, const char *name, int *value);
/** The parameters object itself (borrowed), for other shapes. */
struct json_object *heed_request_parameters(const heed_request *request);

/** Answers hello with the app id and the intents handled. */
int heed_reply_hello(FILE *output, const heed_request *request, const char *app_id,
                     const char *const *intents, size_t intent_count);

/** Resolve outcomes. The *_string forms take a string value; *_value forms take a json-c value (not consumed). */
int heed_reply_resolve_success_string(FILE *output, const heed_request *request, const char *value);
int heed_reply_resolve_success_number(FILE *output, const heed_request *request, double value);
int heed_reply_resolve_success_value(FILE *output, const heed_request *request, struct json_object *value);
int heed_reply_resolve_disambiguation_strings(FILE *output, const heed_request *request,
                                              const char *const *values, size_t count);
int heed_reply_resolve_confirmation_required_string(FILE *output, const heed_request *request, const char *value);
int heed_reply_resolve_needs_value(FILE *output, const heed_request *request);
int heed_reply_resolve_not_required(FILE *output, const heed_request *request);
int heed_reply_resolve_unsupported(FILE *output, const heed_request *request, const char *reason);
/** The default resolve: success with the parameter's value when it has one, needsValue otherwise. */
int heed_reply_resolve_default(FILE *output, const heed_request *request);

/** Confirm outcomes. */
int heed_reply_confirm_ready(FILE *output, const heed_request *request);
int heed_reply_confirm_failure(FILE *output, const heed_request *request, const char *reason);

/** Handle outcome with an optional response text (NULL for none). */
int heed_reply_handle(FILE *output, const heed_request *request, heed_handle_status status, const char *response);

/** An error reply: the plugin cannot serve this request. */
int heed_reply_error(FILE *output, const heed_request *request, const char *message);

/** An unsolicited notification; `intent` and `event` may be NULL. */
int heed_notify(FILE *output, const char *text, const char *intent, const char *event);

#ifdef __cplusplus
}
#endif

#endif
