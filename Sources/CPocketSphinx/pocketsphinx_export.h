#include "/usr/include/pocketsphinx/pocketsphinx_export.h"
