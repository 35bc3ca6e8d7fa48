#include "/usr/include/pocketsphinx/ps_lattice.h"
