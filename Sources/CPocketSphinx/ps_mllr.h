#include "/usr/include/pocketsphinx/ps_mllr.h"
