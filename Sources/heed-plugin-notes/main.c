/* heed-plugin-notes: notes and lists in C with the CHeedPlugin helper (app id org.heed.notes).
 *
 * createNote (title: optional string) and addToList (item, list: strings). Notes and list
 * items are kept in memory for the life of the process; the replies say what was stored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heed_plugin.h"

#define MAX_ENTRIES 256

static char *notes[MAX_ENTRIES];
static size_t note_count;
static struct { char *list; char *item; } entries[MAX_ENTRIES];
static size_t entry_count;

static size_t items_in(const char *list) {
    size_t count = 0;
    for (size_t index = 0; index < entry_count; index++)
        if (strcasecmp(entries[index].list, list) == 0) count++;
    return count;
}

static void resolve(const heed_request *request) {
    const char *intent = heed_request_intent(request);
    const char *name = heed_request_parameter(request);
    if (strcmp(intent, "createNote") == 0 && strcmp(name, "title") == 0) {
        const char *title = heed_param_string(request, "title");
        if (title == NULL) heed_reply_resolve_not_required(stdout, request);
        else if (strlen(title) > 200) heed_reply_resolve_unsupported(stdout, request, "That title is too long.");
        else heed_reply_resolve_success_string(stdout, request, title);
        return;
    }
    if (strcmp(intent, "addToList") == 0) {
        const char *value = heed_param_string(request, name);
        if (value == NULL || value[0] == '\0') heed_reply_resolve_needs_value(stdout, request);
        else heed_reply_resolve_success_string(stdout, request, value);
        return;
    }
    heed_reply_resolve_default(stdout, request);
}

static void confirm(const heed_request *request) {
    const char *intent = heed_request_intent(request);
    if (strcmp(intent, "createNote") == 0 && note_count >= MAX_ENTRIES)
        heed_reply_confirm_failure(stdout, request, "Your notes are full.");
    else if (strcmp(intent, "addToList") == 0 && entry_count >= MAX_ENTRIES)
        heed_reply_confirm_failure(stdout, request, "Your lists are full.");
    else
        heed_reply_confirm_ready(stdout, request);
}

static void handle(const heed_request *request) {
    const char *intent = heed_request_intent(request);
    char response[512];
    if (strcmp(intent, "createNote") == 0) {
        if (note_count >= MAX_ENTRIES) {
            heed_reply_handle(stdout, request, HEED_HANDLE_FAILURE, "Your notes are full.");
            return;
        }
        const char *title = heed_param_string(request, "title");
        notes[note_count++] = strdup(title != NULL ? title : "Untitled");
        if (title != NULL) snprintf(response, sizeof response, "Created a note called %s.", title);
        else snprintf(response, sizeof response, "Created a note.");
        heed_reply_handle(stdout, request, HEED_HANDLE_SUCCESS, response);
        return;
    }
    const char *item = heed_param_string(request, "item");
    const char *list = heed_param_string(request, "list");
    if (item == NULL || list == NULL) {
        heed_reply_error(stdout, request, "addToList needs an item and a list");
        return;
    }
    if (entry_count >= MAX_ENTRIES) {
        heed_reply_handle(stdout, request, HEED_HANDLE_FAILURE, "Your lists are full.");
        return;
    }
    entries[entry_count].list = strdup(list);
    entries[entry_count].item = strdup(item);
    entry_count++;
    size_t count = items_in(list);
    snprintf(response, sizeof response, "Added %s to your %s list. It has %zu item%s.", item, list, count,
             count == 1 ? "" : "s");
    heed_reply_handle(stdout, request, HEED_HANDLE_SUCCESS, response);
}

int main(void) {
    static const char *const intents[] = {"createNote", "addToList"};
    heed_request *request;
    while ((request = heed_read_request(stdin)) != NULL) {
        const char *intent = heed_request_intent(request);
        if (heed_request_is(request, "shutdown")) {
            heed_request_free(request);
            break;
        } else if (heed_request_is(request, "hello")) {
            heed_reply_hello(stdout, request, "org.heed.notes", intents, 2);
        } else if (intent == NULL || (strcmp(intent, "createNote") != 0 && strcmp(intent, "addToList") != 0)) {
            heed_reply_error(stdout, request, "org.heed.notes does not handle this intent");
        } else if (heed_request_is(request, "resolve")) {
            resolve(request);
        } else if (heed_request_is(request, "confirm")) {
            confirm(request);
        } else if (heed_request_is(request, "handle")) {
            handle(request);
        } else {
            heed_reply_error(stdout, request, "unknown op");
        }
        heed_request_free(request);
    }
    for (size_t index = 0; index < note_count; index++) free(notes[index]);
    for (size_t index = 0; index < entry_count; index++) {
        free(entries[index].list);
        free(entries[index].item);
    }
    return 0;
}
