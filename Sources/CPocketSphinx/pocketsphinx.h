#include "/usr/include/pocketsphinx/pocketsphinx.h"
