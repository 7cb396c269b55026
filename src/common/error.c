/* error.c - status names and the tsf_error message buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

tsf_status tsf_err(tsf_error *err, tsf_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void tsf_err_clear(tsf_error *err)
{
    if (err) {
        err->code = TSF_OK;
        err->message[0] = '\0';
    }
}

const char *tsf_status_name(tsf_status s)
{
    switch (s) {
    case TSF_OK: return "TSF_OK";
    case TSF_EINVAL: return "TSF_EINVAL";
    case TSF_ECORRUPT: return "TSF_ECORRUPT";
    case TSF_ENOMEM: return "TSF_ENOMEM";
    case TSF_EIO: return "TSF_EIO";
    case TSF_ENOTSUP: return "TSF_ENOTSUP";
    case TSF_ERANGE: return "TSF_ERANGE";
    case TSF_ENOTFOUND: return "TSF_ENOTFOUND";
    case TSF_ESTATE: return "TSF_ESTATE";
    }
    return "TSF_E?";
}

unsigned tsf_version_number(void)
{
    return TSF_VERSION_NUMBER;
}

const char *tsf_version_string(void)
{
    return TSF_VERSION_STRING;
}
