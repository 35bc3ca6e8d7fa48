#include "/usr/include/pocketsphinx/cmdln_macro.h"
