#include <speex/speex_preprocess.h>
