/* PLACEHOLDER: the E1 codec benchmark is being written. */
#include "bench.h"
int bench_codec(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "codec benchmark not built yet\n");
    return 1;
}
