/*
 * codec_paths.h - the codec paths the integer-codec tests force in turn, and a codec handle opened on
 * one of them (shared by test_ts2diff.c, test_ts2diff_wide.c and test_gorilla.c).
 */
#ifndef TSF_TEST_CODEC_PATHS_H
#define TSF_TEST_CODEC_PATHS_H

#include <stdio.h>
#include <stdlib.h>

#include "codec/codec.h"

static const tsf_codec_path PATHS[] = {TSF_PATH_PER_VALUE, TSF_PATH_SCALAR, TSF_PATH_SSE41, TSF_PATH_AVX2,
                                       TSF_PATH_AVX512};
#define NPATHS (sizeof PATHS / sizeof PATHS[0])

/* A codec forced to path p; a test binary that cannot open one stops at once. */
static tsf_codec *open_path(tsf_codec_path p)
{
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = p;
    tsf_codec *c = NULL;
    tsf_error err;
    if (tsf_codec_open(&c, &o, &err) != TSF_OK) {
        fprintf(stderr, "open %s: %s\n", tsf_codec_path_name(p), err.message);
        exit(1);
    }
    return c;
}

#endif
