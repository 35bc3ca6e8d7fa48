#include "/usr/include/pocketsphinx/ps_search.h"
