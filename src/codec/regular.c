/* PLACEHOLDER: replaced by the real codec. */
#include "codec.h"
const tsf_codec_vt tsf_codec_regular = {.encoding = 0};
