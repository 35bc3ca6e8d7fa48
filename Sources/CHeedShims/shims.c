#include "CHeedShims.h"

#include <stdarg.h>
#include <stdio.h>
#include <sphinxbase/err.h>

static heed_log_handler current_handler = NULL;

static void forward(void *context, err_lvl_t level, const char *format, ...) {
    if (current_handler == NULL) {
        return;
    }
    char message[2048];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    current_handler(context, (int)level, message);
}

void heed_sphinx_set_log_handler(heed_log_handler handler, void *context) {
    current_handler = handler;
    /* Without a log file, sphinxbase's direct prints (the configuration dump) go nowhere. */
    err_set_logfp(NULL);
    err_set_callback(handler == NULL ? NULL : forward, context);
}
