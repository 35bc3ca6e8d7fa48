#ifndef HEED_SHIMS_H
#define HEED_SHIMS_H

#include <stdio.h>

/// A log line from sphinxbase, formatted. `level` is sphinxbase's `err_lvl_t`
/// (0 debug, 1 info, 2 info continuation, 3 warning, 4 error, 5 fatal).
typedef void (*heed_log_handler)(void *context, int level, const char *message);

/// Routes sphinxbase's log (`err_set_callback`, whose callback is variadic and
/// so cannot be written in Swift) to `handler`. Pass NULL to silence it.
void heed_sphinx_set_log_handler(heed_log_handler handler, void *context);

/// Gives the decoder Heed's evaluator of its acoustic model (gaussians.c): the same senone
/// scores as PocketSphinx's own `ptm_mgau_frame_eval`, computed across each codebook's densities
/// at once. `decoder` is a `ps_decoder_t *`. With `avx2` 0 it runs only the baseline code every
/// x86-64 CPU has (SSE2), as on a CPU without AVX2; otherwise AVX2 where the CPU has it. Returns
/// 0 when installed, -1 when the decoder keeps PocketSphinx's scoring (a model that is not PTM,
/// or layouts unlike Debian's 0.8+5prealpha).
int heed_scoring_install(void *decoder, int avx2);

/// Writes the senone scores of the decoder's current utterance to `file`, frame after frame, as
/// `-senlogdir` writes them to a file of its own (`ps_decode_senscr` reads them); the decoder
/// closes `file` when the utterance ends, when it is freed, or at the next call. NULL closes the
/// stream now. `decoder` is a `ps_decoder_t *`. Returns -1 when the decoder's layout is not that
/// of Debian's 0.8+5prealpha (nothing done) or the header cannot be written.
int heed_write_scores(void *decoder, FILE *file);

#endif
