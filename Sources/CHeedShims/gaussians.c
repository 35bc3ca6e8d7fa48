/*
 * The acoustic scoring of a PocketSphinx decoder, computed across each codebook's densities at
 * once instead of one density at a time (docs/RECOGNITION.md, "Acoustic scoring").
 *
 * PocketSphinx spends nine tenths of a decode in `ptm_mgau_frame_eval`, which scores one
 * Gaussian at a time and gives up on each as soon as it cannot reach the codebook's top N. This
 * file puts another evaluator in the decoder's table of scoring functions (`ps_mgaufuncs_t`) that
 * gives the same senone scores, bit for bit: each density's distance is summed over its
 * dimensions in the same order with the same single-precision operations (no fused
 * multiply-adds), only for 32 densities side by side in vector registers, from the model's means
 * and precisions regrouped in place (eight densities, dimension by dimension); the top N are
 * then chosen, normalised and mixed with the mixture weights exactly as PocketSphinx does, every
 * senone of a codebook sixteen at a time with AVX2 when all are wanted.
 *
 * Swift cannot write this: it reads structures PocketSphinx does not export. Their layouts are
 * those of Debian's 0.8+5prealpha+1 (src/libpocketsphinx: pocketsphinx_internal.h, acmod.h,
 * ptm_mgau.h, ms_gauden.h), and `heed_scoring_install` checks them against what the public API
 * reports before it changes anything; on any mismatch, or a model that is not phonetically tied
 * (PTM), the decoder keeps PocketSphinx's own scoring.
 *
 * With the same checks, `heed_write_scores` hands the acoustic model the stream an utterance's
 * senone scores go to, as `-senlogdir` does with a file of its own: Heed keeps them in memory.
 */
#include "CHeedShims.h"

#include <immintrin.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/bitvec.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/logmath.h>

/* The sums must round as PocketSphinx's do: no fused multiply-adds. */
#pragma STDC FP_CONTRACT OFF

/* ---- PocketSphinx's private layouts (Debian 0.8+5prealpha+1) ---- */

typedef struct sphinx_mgau sphinx_mgau;

/* `ps_mgaufuncs_t` (acmod.h) */
typedef struct {
    const char *name;
    int (*frame_eval)(sphinx_mgau *mgau, int16 *senone_scores, uint8 *senone_active,
                      int32 n_senone_active, mfcc_t **feature, int32 frame, int32 compute_all);
    int (*transform)(sphinx_mgau *mgau, void *mllr);
    void (*free)(sphinx_mgau *mgau);
} sphinx_mgau_functions;

/* `ps_mgau_t` (acmod.h) */
struct sphinx_mgau {
    sphinx_mgau_functions *functions;
    int frame_index;
};

/* The head of `ps_decoder_t` (pocketsphinx_internal.h) */
typedef struct {
    cmd_ln_t *config;
    int reference_count;
    struct sphinx_acoustic_model *acoustic_model;
} sphinx_decoder_head;

/* The head of `acmod_t` (acmod.h) */
typedef struct sphinx_acoustic_model {
    cmd_ln_t *config;
    logmath_t *log_math;
    void *strings;
    fe_t *front_end;
    feat_t *features;
    void *model_definition;
    void *transitions;
    sphinx_mgau *mgau;
} sphinx_acoustic_model;

/* `gauden_t` (ms_gauden.h) */
typedef struct {
    mfcc_t ****mean;
    mfcc_t ****precision;      /* `var`: 1 / (2 variance), scaled to the log base */
    mfcc_t ***log_determinant; /* `det` */
    logmath_t *log_math;
    int32 codebooks;
    int32 streams;
    int32 densities;
    int32 *stream_length;
} sphinx_gaussians;

/* `ptm_topn_t` and `ptm_fast_eval_t` (ptm_mgau.h) */
typedef struct {
    int32 density;
    int32 score;
} sphinx_top_entry;

typedef struct {
    sphinx_top_entry ***top; /* [codebook][stream][rank] */
    bitvec_t *active_codebooks;
} sphinx_frame_state;

/* `ptm_mgau_t` (ptm_mgau.h) */
typedef struct {
    sphinx_mgau base;
    cmd_ln_t *config;
    sphinx_gaussians *gaussians;
    int32 senones;
    uint8 *senone_codebook;
    uint8 ***mixture_weights; /* [stream][density][senone], negated, 8 bits (or 4, packed) */
    void *sendump_map;
    uint8 *weight_codebook;   /* the 16 values of 4-bit weights, or NULL */
    int16 top_count;
    int16 downsampling;
    sphinx_frame_state *history;
    sphinx_frame_state *current;
    int history_length;
    logmath_t *log_math_8bit;
    logmath_t *log_math;
} sphinx_ptm;

/* hmm.h and tied_mgau_common.h */
enum { score_shift = 10, worst_score = (int)0xE0000000, most_negative_score = 96 };

/* ---- Heed's evaluator ---- */

enum { group_size = 8, groups_at_once = 4, head_length = 32, max_top = 8 };
typedef float octet __attribute__((vector_size(group_size * sizeof(float)), aligned(4)));

/* One of the top N of a codebook's stream: its row of mixture weights (over senones) and its
 * normalised score. */
typedef struct {
    const uint8 *weights;
    int32 score;
} mixing_term;

typedef struct {
    /* First, so that the mgau's table pointer leads back here. */
    sphinx_mgau_functions functions;
    const sphinx_mgau_functions *original;
    float *distances; /* one codebook's densities */
    float *maxima;    /* their greatest, each group of eight's */
    float *scratch;   /* one codebook's stream, while it is regrouped */
    /* What mixes a codebook's senones in the current call, [codebook][stream][rank], filled
     * the first time one of its senones is scored (`ready`). */
    mixing_term *terms;
    uint8 *ready;
    /* Per senone, the end of the run of senones of its codebook it is in. */
    int32 *run_end;
    /* Sixteen senones at a time with AVX2 (`wide`), where the 8-bit log-add table is 0 from its
     * entry `head_length` on: its entries are then looked up in `log_head`, the first
     * `head_length` (0 past the table's end), and `log_table_size` is its length. */
    int wide;
    /* Whether the AVX2 code runs: the CPU has it and the caller did not ask for the baseline. */
    int avx2;
    uint8 log_head[head_length];
    int32 log_table_size;
} heed_scoring;

static heed_scoring *scoring_of(sphinx_mgau *mgau) {
    return (heed_scoring *)mgau->functions;
}

/* Where a density's dimension lies once its codebook's stream is regrouped: groups of eight
 * densities, each group dimension by dimension, so that one dimension of eight densities is one
 * load and a density's dimensions lie within one group. */
static size_t grouped(int32 density, int32 dimension, int32 length) {
    return (size_t)(density / group_size) * length * group_size + (size_t)dimension * group_size
        + density % group_size;
}

/* Regroups each codebook's stream of means and of precisions in place, from density-major (the
 * model's layout, which only PocketSphinx's own evaluator reads) as `grouped` says; `back` turns
 * them back. */
static void regroup(heed_scoring *scoring, const sphinx_ptm *model, int back) {
    const sphinx_gaussians *g = model->gaussians;
    for (int32 c = 0; c < g->codebooks; ++c) {
        for (int32 s = 0; s < g->streams; ++s) {
            const int32 length = g->stream_length[s];
            const size_t size = (size_t)length * g->densities * sizeof(float);
            float *blocks[2] = { g->mean[c][s][0], g->precision[c][s][0] };
            for (int b = 0; b < 2; ++b) {
                memcpy(scoring->scratch, blocks[b], size);
                for (int32 d = 0; d < g->densities; ++d) {
                    for (int32 j = 0; j < length; ++j) {
                        const size_t by_density = (size_t)d * length + j;
                        if (back) {
                            blocks[b][by_density] = scoring->scratch[grouped(d, j, length)];
                        } else {
                            blocks[b][grouped(d, j, length)] = scoring->scratch[by_density];
                        }
                    }
                }
            }
        }
    }
}

/* The distance of `z` to every density of one codebook's stream, as PocketSphinx sums it: from
 * the log determinant, each dimension in order subtracts (z - mean)^2 * precision. Four groups
 * of eight at a time. `maxima` gets each group's greatest. */
static inline __attribute__((always_inline)) void
all_distances(const float *z, const float *means, const float *precisions,
              const float *log_determinant, int32 length, int32 densities, float *out,
              float *maxima) {
    const size_t group_floats = (size_t)length * group_size;
    for (int32 d = 0; d < densities; d += groups_at_once * group_size) {
        const float *mean = means + (size_t)(d / group_size) * group_floats;
        const float *precision = precisions + (size_t)(d / group_size) * group_floats;
        octet sum[groups_at_once];
        memcpy(sum, log_determinant + d, sizeof sum);
        for (int32 j = 0; j < length; ++j) {
            for (int k = 0; k < groups_at_once; ++k) {
                octet m, p;
                memcpy(&m, mean + k * group_floats + (size_t)j * group_size, sizeof m);
                memcpy(&p, precision + k * group_floats + (size_t)j * group_size, sizeof p);
                const octet difference = z[j] - m;
                const octet squared = difference * difference;
                const octet term = squared * p;
                sum[k] = sum[k] - term;
            }
        }
        memcpy(out + d, sum, sizeof sum);
        for (int k = 0; k < groups_at_once; ++k) {
            maxima[d / group_size + k] = __builtin_reduce_max(sum[k]);
        }
    }
}

/* `all_distances` compiled for AVX2, and for the baseline (SSE2) that every x86-64 CPU has: the
 * same operations in the same order, so the same distances. */
__attribute__((target("avx2")))
static void all_distances_avx2(const float *z, const float *means, const float *precisions,
                               const float *log_determinant, int32 length, int32 densities,
                               float *out, float *maxima) {
    all_distances(z, means, precisions, log_determinant, length, densities, out, maxima);
}

static void all_distances_baseline(const float *z, const float *means, const float *precisions,
                                   const float *log_determinant, int32 length, int32 densities,
                                   float *out, float *maxima) {
    all_distances(z, means, precisions, log_determinant, length, densities, out, maxima);
}

/* The distances of the densities `top` names, four side by side, in the same order and
 * operations as `all_distances`. */
static void top_distances(const float *z, const float *means, const float *precisions,
                          const float *log_determinant, int32 length, const sphinx_top_entry *top,
                          int count, float *out) {
    typedef float quad __attribute__((vector_size(4 * sizeof(float))));
    for (int first = 0; first < count; first += 4) {
        size_t at[4];
        int32 density[4];
        for (int k = 0; k < 4; ++k) {
            density[k] = top[first + k < count ? first + k : first].density;
            at[k] = grouped(density[k], 0, length);
        }
        quad sum = { log_determinant[density[0]], log_determinant[density[1]],
                     log_determinant[density[2]], log_determinant[density[3]] };
        for (int32 j = 0; j < length; ++j) {
            const size_t step = (size_t)j * group_size;
            const quad mean = { means[at[0] + step], means[at[1] + step], means[at[2] + step],
                                means[at[3] + step] };
            const quad precision = { precisions[at[0] + step], precisions[at[1] + step],
                                     precisions[at[2] + step], precisions[at[3] + step] };
            const quad difference = z[j] - mean;
            const quad squared = difference * difference;
            const quad term = squared * precision;
            sum = sum - term;
        }
        for (int k = 0; k < 4 && first + k < count; ++k) {
            out[first + k] = sum[k];
        }
    }
}

/* A distance as PocketSphinx stores it: truncated, and held at INT_MIN below it. */
static int32 stored(float distance) {
    return distance < (float)INT_MIN ? INT_MIN : (int32)distance;
}

/* Rescores last frame's top N of one codebook's stream and sorts them, best first; ties keep
 * their order. */
static void rescore_top(sphinx_top_entry *top, int count, const float *distance_of) {
    for (int i = 0; i < count; ++i) {
        const sphinx_top_entry entry = { top[i].density, stored(distance_of[i]) };
        int j = i - 1;
        while (j >= 0 && entry.score > top[j].score) {
            top[j + 1] = top[j];
            --j;
        }
        top[j + 1] = entry;
    }
}

/* A distance under which no density can end among the codebook stream's top N, so that letting
 * it in first changes nothing (docs/RECOGNITION.md, "Acoustic scoring"): one under the Nth best
 * of the stored maxima of its groups of eight densities, which that many densities reach and the
 * top N's final worst then does too. -inf with fewer groups than N, or beyond the integers a
 * float holds exactly. */
static inline __attribute__((always_inline)) float below_the_top_of(const float *maxima, int32 groups,
                                                                     int count) {
    if (groups < count || count > max_top) {
        return -INFINITY;
    }
    /* The best maxima, descending: each goes down the list through maxima and minima. A group
     * with no number (NaN) does not count. */
    float best[max_top];
    for (int i = 0; i < count; ++i) {
        best[i] = -INFINITY;
    }
    for (int32 group = 0; group < groups; ++group) {
        float going = maxima[group];
        if (going != going) {
            continue;
        }
        for (int i = 0; i < count; ++i) {
            const float kept = best[i] > going ? best[i] : going;
            going = best[i] > going ? going : best[i];
            best[i] = kept;
        }
    }
    const int32 floor = stored(best[count - 1]);
    return floor > -(1 << 24) && floor < (1 << 24) ? (float)(floor - 1) : -INFINITY;
}

/* `below_the_top_of`, with the usual four as a constant: the list stays in registers. */
static float below_the_top(const float *maxima, int32 groups, int count) {
    return count == 4 ? below_the_top_of(maxima, groups, 4) : below_the_top_of(maxima, groups, count);
}

/* Which of 32 densities' distances, from `distances` on, are at least `least`: a bit each. */
static uint32_t reaching_32(const float *distances, __m128 least) {
    uint32_t reaching = 0;
    for (int k = 0; k < 8; ++k) {
        reaching |= (uint32_t)_mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(distances + 4 * k), least)) << (4 * k);
    }
    return reaching;
}

/* Lets every density of the codebook's stream that reaches the worst of the top N in, in density
 * order, unless it is among them when its turn comes; a newcomer goes above the entries it ties
 * with. The worst only rises, so the densities of 32 at a time that reach it as it was are the only
 * ones that may; of those, the ones under `below_the_top` are passed over too, and the ones among
 * the top N (a bit each in `among`) are not looked at. */
static void admit(sphinx_top_entry *top, int count, const float *distances, const float *maxima,
                  int32 densities) {
    const float below = below_the_top(maxima, densities / group_size, count);
    uint32_t among[densities / 32];
    memset(among, 0, sizeof among);
    for (int i = 0; i < count; ++i) {
        among[top[i].density / 32] |= 1u << (top[i].density % 32);
    }
    for (int32 block = 0; block < densities; block += 32) {
        const float worst = (float)top[count - 1].score;
        const float floor = worst > below ? worst : below;
        uint32_t reaching = reaching_32(distances + block, _mm_set1_ps(floor)) & ~among[block / 32];
        while (reaching != 0) {
            const int32 d = block + __builtin_ctz(reaching);
            reaching &= reaching - 1;
            const float distance = distances[d];
            if (distance < (float)top[count - 1].score) {
                continue;
            }
            /* The worst goes; if its turn in this block is still to come, it may come back in. */
            const int32 dropped = top[count - 1].density;
            among[dropped / 32] &= ~(1u << (dropped % 32));
            among[d / 32] |= 1u << (d % 32);
            if (dropped > d && dropped < block + 32 && distances[dropped] >= floor) {
                reaching |= 1u << (dropped - block);
            }
            const int32 score = stored(distance);
            int slot = count - 1;
            while (slot > 0 && score >= top[slot - 1].score) {
                top[slot] = top[slot - 1];
                --slot;
            }
            top[slot].density = d;
            top[slot].score = score;
        }
    }
}

/* How many of `distances` are at least `least`. */
static int reaching_count(const float *distances, int32 densities, float least) {
    int reaching = 0;
    for (int32 block = 0; block < densities; block += 32) {
        reaching += __builtin_popcount(reaching_32(distances + block, _mm_set1_ps(least)));
    }
    return reaching;
}

/* The top N of a codebook's stream chosen at once, where no tie can matter: `rescore_top` and
 * `admit` give the same list (docs/RECOGNITION.md, "Acoustic scoring"). First a score that N
 * densities reach, by halving the span from last frame's worst to the best; those that reach one
 * under it are gathered, and if there are N or more they hold the N best. When the N + 1 best
 * of their stored scores all differ (N when only N are gathered), the list is those N best in
 * order, however PocketSphinx came to it. Returns 0, the list untouched, when fewer than N or
 * more than `most_chosen` are gathered, when two of them tie, or when N is over 62. */
enum { most_chosen = 32, halvings = 4 };
static int choose_top(sphinx_top_entry *top, int count, const float *distances, const float *maxima,
                      int32 densities) {
    if (count > 62) {
        return 0;
    }
    /* Last frame's top N score at least their worst now: N densities reach it. */
    int32 reached = INT32_MAX;
    for (int i = 0; i < count; ++i) {
        const int32 score = stored(distances[top[i].density]);
        reached = score < reached ? score : reached;
    }
    float best = -INFINITY;
    for (int32 group = 0; group < densities / group_size; ++group) {
        best = maxima[group] > best ? maxima[group] : best;
    }
    if (!(best < (float)(1 << 24)) || reached <= -(1 << 24)) {
        return 0;
    }
    int32 unreached = stored(best) + 1;
    for (int k = 0; k < halvings && unreached - reached > 1; ++k) {
        const int32 middle = reached + (unreached - reached) / 2;
        if (reaching_count(distances, densities, (float)middle) >= count) {
            reached = middle;
        } else {
            unreached = middle;
        }
    }
    const __m128 least = _mm_set1_ps((float)(reached - 1));
    int32 density[most_chosen];
    int32 score[most_chosen + 3];
    int n = 0;
    for (int32 block = 0; block < densities; block += 32) {
        uint32_t may = reaching_32(distances + block, least);
        if (n + __builtin_popcount(may) > most_chosen) {
            return 0;
        }
        for (; may != 0; may &= may - 1) {
            density[n] = block + __builtin_ctz(may);
            score[n] = stored(distances[density[n]]);
            ++n;
        }
    }
    for (int i = n; i < n + 3; ++i) {
        score[i] = INT32_MIN; /* more than none */
    }
    /* Each one's rank: how many score more. The ranks of the N + 1 best (N when there are no
     * more) are all different exactly when none of them ties. */
    int rank[most_chosen];
    uint64_t ranks = 0;
    for (int i = 0; i < n; ++i) {
        const __m128i own = _mm_set1_epi32(score[i]);
        int above = 0;
        for (int j = 0; j < n; j += 4) {
            const __m128i four = _mm_loadu_si128((const __m128i *)(score + j));
            above += __builtin_popcount((unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(four, own))));
        }
        rank[i] = above;
        ranks |= above <= count ? 1ull << above : 0;
    }
    const int decided = n > count ? count + 1 : count;
    if (n < count || ranks != (1ull << decided) - 1) {
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        if (rank[i] < count) {
            top[rank[i]].density = density[i];
            top[rank[i]].score = score[i];
        }
    }
    return 1;
}

static void evaluate_codebooks(heed_scoring *scoring, sphinx_ptm *model, mfcc_t **feature, int32 frame) {
    const sphinx_gaussians *g = model->gaussians;
    const int count = model->top_count;
    const int full = frame % model->downsampling == 0;
    for (int32 c = 0; c < g->codebooks; ++c) {
        const int active = full && bitvec_is_set(model->current->active_codebooks, c);
        for (int32 s = 0; s < g->streams; ++s) {
            const int32 length = g->stream_length[s];
            const float *means = g->mean[c][s][0];
            const float *precisions = g->precision[c][s][0];
            const float *log_determinant = g->log_determinant[c][s];
            sphinx_top_entry *top = model->current->top[c][s];
            float previous[count];
            if (active) {
                (scoring->avx2 ? all_distances_avx2 : all_distances_baseline)(
                    feature[s], means, precisions, log_determinant, length, g->densities,
                    scoring->distances, scoring->maxima);
                /* Past `max_top` the bound of `below_the_top` is gone, and choosing at once is
                 * quicker; under it, admitting one by one is. */
                if (count > max_top && choose_top(top, count, scoring->distances, scoring->maxima, g->densities)) {
                    continue;
                }
                for (int i = 0; i < count; ++i) {
                    previous[i] = scoring->distances[top[i].density];
                }
            } else {
                top_distances(feature[s], means, precisions, log_determinant, length, top, count,
                              previous);
            }
            rescore_top(top, count, previous);
            if (active) {
                admit(top, count, scoring->distances, scoring->maxima, g->densities);
            }
        }
    }
}

/* Each stream's top-N scores of the active codebooks, shifted, made relative to the best and
 * negated, held at `most_negative_score`. */
static void normalise(sphinx_ptm *model) {
    const sphinx_gaussians *g = model->gaussians;
    for (int32 s = 0; s < g->streams; ++s) {
        int32 best = worst_score;
        for (int32 c = 0; c < g->codebooks; ++c) {
            if (bitvec_is_set(model->current->active_codebooks, c)) {
                const int32 score = model->current->top[c][s][0].score >> score_shift;
                if (best < score) {
                    best = score;
                }
            }
        }
        for (int32 c = 0; c < g->codebooks; ++c) {
            if (!bitvec_is_set(model->current->active_codebooks, c)) {
                continue;
            }
            sphinx_top_entry *top = model->current->top[c][s];
            for (int i = 0; i < model->top_count; ++i) {
                const int32 score = -((top[i].score >> score_shift) - best);
                top[i].score = score > most_negative_score ? most_negative_score : score;
            }
        }
    }
}

/* `fast_logmath_add` of tied_mgau_common.h: two negated log values whose difference is under 256. */
static int add_negated_logs(const logadd_t *table, int x, int y) {
    const int difference = x > y ? x - y : y - x;
    const int smaller = x > y ? y : x;
    return smaller - ((const uint8 *)table->table)[difference];
}

/* Fills `terms` for a codebook from its top N of the current frame. A codebook that was not
 * evaluated gets the most negative score for each of its top N, as in PocketSphinx. */
static mixing_term *mixing_terms(heed_scoring *scoring, sphinx_ptm *model, int codebook) {
    const sphinx_gaussians *g = model->gaussians;
    const int count = model->top_count;
    mixing_term *terms = scoring->terms + (size_t)codebook * g->streams * count;
    if (scoring->ready[codebook]) {
        return terms;
    }
    const int evaluated = bitvec_is_set(model->current->active_codebooks, codebook);
    for (int32 s = 0; s < g->streams; ++s) {
        sphinx_top_entry *top = model->current->top[codebook][s];
        for (int k = 0; k < count; ++k) {
            if (!evaluated) {
                top[k].score = most_negative_score;
            }
            terms[s * count + k].weights = model->mixture_weights[s][top[k].density];
            terms[s * count + k].score = top[k].score;
        }
    }
    scoring->ready[codebook] = 1;
    return terms;
}

/* One senone's score: per stream, the log sum of its mixture weights and its codebook's top-N
 * scores; summed over the streams. */
static int senone_score(const sphinx_ptm *model, const logadd_t *table, const mixing_term *terms,
                        int32 senone) {
    const int count = model->top_count;
    int score = 0;
    for (int32 s = 0; s < model->gaussians->streams; ++s) {
        const mixing_term *term = terms + s * count;
        int density = 0;
        for (int k = 0; k < count; ++k) {
            int weight;
            if (model->weight_codebook != NULL) {
                const int pair = term[k].weights[senone / 2];
                weight = model->weight_codebook[(pair & 1) ? pair >> 4 : pair & 0x0f];
            } else {
                weight = term[k].weights[senone];
            }
            density = k == 0 ? weight + term[k].score
                             : add_negated_logs(table, density, weight + term[k].score);
        }
        score += density;
    }
    return score;
}

/* `senone_score` of the senones from `first` on, up to `end`, all of one codebook, sixteen at a
 * time: the same integer sums in 16-bit lanes (they stay within a few hundred times the number
 * of streams, checked at install), the log-add table's entry looked up in its head. Stops
 * before a group whose differences would leave the table (PocketSphinx reads past it there; the
 * scalar loop does as it does). Returns the first senone not scored. */
__attribute__((target("avx2")))
static int32 score_run_wide(const heed_scoring *scoring, const sphinx_ptm *model,
                            const mixing_term *terms, int32 first, int32 end, int16 *senone_scores,
                            int *best) {
    const int count = model->top_count;
    const __m256i last_index = _mm256_set1_epi16((int16)(scoring->log_table_size - 1));
    const __m256i head_low = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)scoring->log_head));
    const __m256i head_high = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(scoring->log_head + 16)));
    const __m256i last_head = _mm256_set1_epi16(head_length - 1);
    const __m256i fifteen = _mm256_set1_epi16(15);
    const __m256i high_byte_zero = _mm256_set1_epi16(INT16_MIN);
    __m256i lowest = _mm256_set1_epi16(INT16_MAX);
    const __m256i lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    int32 senone = first;
    /* The run's last few, fewer than sixteen, too: the lanes past its end score other senones
     * with this codebook's terms and are dropped (while sixteen rows of weights are there). */
    for (; senone < end && senone + 16 <= model->senones; senone += 16) {
        const int lanes = end - senone < 16 ? end - senone : 16;
        const __m256i kept = _mm256_cmpgt_epi16(_mm256_set1_epi16((int16)lanes), lane);
        __m256i score = _mm256_setzero_si256();
        __m256i outside = _mm256_setzero_si256();
        for (int32 s = 0; s < model->gaussians->streams; ++s) {
            const mixing_term *term = terms + s * count;
            __m256i density = _mm256_setzero_si256();
            for (int k = 0; k < count; ++k) {
                const __m128i bytes = _mm_loadu_si128((const __m128i *)(term[k].weights + senone));
                const __m256i value = _mm256_add_epi16(_mm256_cvtepu8_epi16(bytes),
                                                       _mm256_set1_epi16((int16)term[k].score));
                if (k == 0) {
                    density = value;
                    continue;
                }
                const __m256i difference = _mm256_abs_epi16(_mm256_sub_epi16(density, value));
                outside = _mm256_or_si256(outside, _mm256_cmpgt_epi16(difference, last_index));
                /* The entry: the difference's low byte picks it from either half of the head
                 * (byte shuffles), the high byte's top bit zeroes the lane's high byte. */
                const __m256i index = _mm256_or_si256(_mm256_min_epu16(difference, last_head), high_byte_zero);
                const __m256i entry = _mm256_blendv_epi8(_mm256_shuffle_epi8(head_low, index),
                                                         _mm256_shuffle_epi8(head_high, index),
                                                         _mm256_cmpgt_epi16(difference, fifteen));
                density = _mm256_sub_epi16(_mm256_min_epi16(density, value), entry);
            }
            score = _mm256_add_epi16(score, density);
        }
        outside = _mm256_and_si256(outside, kept);
        if (!_mm256_testz_si256(outside, outside)) {
            break;
        }
        if (lanes == 16) {
            _mm256_storeu_si256((__m256i *)(senone_scores + senone), score);
            lowest = _mm256_min_epi16(lowest, score);
            continue;
        }
        int16 scores[16];
        _mm256_storeu_si256((__m256i *)scores, score);
        memcpy(senone_scores + senone, scores, (size_t)lanes * sizeof *scores);
        lowest = _mm256_min_epi16(lowest, _mm256_blendv_epi8(_mm256_set1_epi16(INT16_MAX), score, kept));
        senone = end;
        break;
    }
    int16 lows[16];
    _mm256_storeu_si256((__m256i *)lows, lowest);
    for (int k = 0; k < 16; ++k) {
        *best = lows[k] < *best ? lows[k] : *best;
    }
    return senone;
}

/* Each senone's score, then made relative to the best. Every senone (`compute_all`) goes in
 * runs of one codebook, sixteen at a time where the CPU has AVX2; the active ones one by one. */
static void score_senones(heed_scoring *scoring, sphinx_ptm *model, int16 *senone_scores,
                          const uint8 *senone_active, int32 active_count, int compute_all) {
    const logadd_t *table = LOGMATH_TABLE(model->log_math_8bit);
    const int wide = compute_all && scoring->wide && model->weight_codebook == NULL;
    memset(senone_scores, 0, (size_t)model->senones * sizeof *senone_scores);
    memset(scoring->ready, 0, (size_t)model->gaussians->codebooks);
    const int32 senones = compute_all ? model->senones : active_count;
    int best = 0x7fffffff;
    int32 senone = 0;
    int32 run_end = 0; /* the end of the run `score_run_wide` last had */
    for (int32 i = 0; i < senones; ++i) {
        senone = compute_all ? i : senone + senone_active[i];
        const int codebook = model->senone_codebook[senone];
        const mixing_term *terms = mixing_terms(scoring, model, codebook);
        if (wide && i >= run_end) {
            run_end = scoring->run_end[i];
            if (run_end < senones) {
                /* The next run's rows of weights, fetched while this one is scored. */
                const mixing_term *next = mixing_terms(scoring, model, model->senone_codebook[run_end]);
                for (int32 t = 0; t < model->gaussians->streams * model->top_count; ++t) {
                    __builtin_prefetch(next[t].weights + run_end);
                    __builtin_prefetch(next[t].weights + run_end + 64);
                }
            }
            const int32 next = score_run_wide(scoring, model, terms, i, run_end, senone_scores, &best);
            if (next > i) {
                i = next - 1;
                continue;
            }
        }
        const int score = senone_score(model, table, terms, senone);
        if (score < best) {
            best = score;
        }
        senone_scores[senone] = (int16)score;
    }
    for (int32 i = 0; i < model->senones; ++i) {
        senone_scores[i] = (int16)(senone_scores[i] - best);
    }
}

static int frame_eval(sphinx_mgau *mgau, int16 *senone_scores, uint8 *senone_active,
                      int32 active_count, mfcc_t **feature, int32 frame, int32 compute_all) {
    heed_scoring *scoring = scoring_of(mgau);
    sphinx_ptm *model = (sphinx_ptm *)mgau;
    const sphinx_gaussians *g = model->gaussians;
    const int slot = frame % model->history_length;
    model->current = model->history + slot;
    if (frame >= mgau->frame_index) {
        const sphinx_frame_state *last = model->history + (slot == 0 ? model->history_length - 1 : slot - 1);
        memcpy(model->current->top[0][0], last->top[0][0],
               (size_t)g->codebooks * g->streams * model->top_count * sizeof(sphinx_top_entry));
        if (compute_all) {
            bitvec_set_all(model->current->active_codebooks, g->codebooks);
        } else {
            bitvec_clear_all(model->current->active_codebooks, g->codebooks);
            int32 senone = 0;
            for (int32 i = 0; i < active_count; ++i) {
                senone += senone_active[i];
                bitvec_set(model->current->active_codebooks, model->senone_codebook[senone]);
            }
        }
        evaluate_codebooks(scoring, model, feature, frame);
        normalise(model);
    }
    score_senones(scoring, model, senone_scores, senone_active, active_count, compute_all);
    return 0;
}

static void release(heed_scoring *scoring) {
    free(scoring->distances);
    free(scoring->maxima);
    free(scoring->scratch);
    free(scoring->terms);
    free(scoring->ready);
    free(scoring->run_end);
    free(scoring);
}

static int transform(sphinx_mgau *mgau, void *mllr) {
    heed_scoring *scoring = scoring_of(mgau);
    regroup(scoring, (const sphinx_ptm *)mgau, 1);
    const int result = scoring->original->transform(mgau, mllr);
    regroup(scoring, (const sphinx_ptm *)mgau, 0);
    return result;
}

static void free_mgau(sphinx_mgau *mgau) {
    heed_scoring *scoring = scoring_of(mgau);
    void (*original_free)(sphinx_mgau *) = scoring->original->free;
    mgau->functions = (sphinx_mgau_functions *)scoring->original;
    release(scoring);
    original_free(mgau);
}

/* The decoder's acoustic model, once the heads of `ps_decoder_t` and `acmod_t` above are checked
 * against what the public API reports; NULL when they are not the library's. */
static sphinx_acoustic_model *checked_acoustic_model(ps_decoder_t *decoder) {
    const sphinx_decoder_head *head = (const sphinx_decoder_head *)decoder;
    cmd_ln_t *config = ps_get_config(decoder);
    if (head->config != config || head->acoustic_model == NULL) {
        return NULL;
    }
    sphinx_acoustic_model *acoustic = head->acoustic_model;
    if (acoustic->config != config || acoustic->log_math != ps_get_logmath(decoder)
        || acoustic->front_end != ps_get_fe(decoder) || acoustic->features != ps_get_feat(decoder)) {
        return NULL;
    }
    return acoustic;
}

/* The checks that the private layouts above are the library's. */
static const sphinx_ptm *checked_model(ps_decoder_t *decoder) {
    cmd_ln_t *config = ps_get_config(decoder);
    const sphinx_acoustic_model *acoustic = checked_acoustic_model(decoder);
    if (acoustic == NULL || acoustic->mgau == NULL || acoustic->mgau->functions == NULL
        || acoustic->mgau->functions->name == NULL || strcmp(acoustic->mgau->functions->name, "ptm") != 0) {
        return NULL;
    }
    const sphinx_ptm *model = (const sphinx_ptm *)acoustic->mgau;
    const sphinx_gaussians *g = model->gaussians;
    feat_t *features = ps_get_feat(decoder);
    if (model->config != config || g == NULL || model->log_math_8bit == NULL
        || model->top_count != cmd_ln_int32_r(config, "-topn") || model->top_count < 1
        || model->downsampling != cmd_ln_int32_r(config, "-ds") || model->downsampling < 1
        || g->streams != (int32)feat_dimension1(features) || g->densities % (group_size * groups_at_once) != 0
        || g->densities < model->top_count || g->codebooks < 1 || g->codebooks > 256
        || model->history_length < 1 || LOGMATH_TABLE(model->log_math_8bit)->width != 1) {
        return NULL;
    }
    for (int32 s = 0; s < g->streams; ++s) {
        if (g->stream_length[s] != (int32)feat_dimension2(features, s)) {
            return NULL;
        }
    }
    if (model->senones < 1 || model->senone_codebook == NULL) {
        return NULL;
    }
    for (int32 i = 0; i < model->senones; ++i) {
        if (model->senone_codebook[i] >= g->codebooks) {
            return NULL;
        }
    }
    return model;
}

int heed_scoring_install(void *raw, int avx2) {
    ps_decoder_t *decoder = raw;
    const sphinx_ptm *model = checked_model(decoder);
    if (model == NULL) {
        return -1;
    }
    const sphinx_gaussians *g = model->gaussians;
    int32 longest = 0;
    for (int32 s = 0; s < g->streams; ++s) {
        longest = g->stream_length[s] > longest ? g->stream_length[s] : longest;
    }
    heed_scoring *scoring = calloc(1, sizeof *scoring);
    if (scoring == NULL) {
        return -1;
    }
    scoring->distances = malloc((size_t)g->densities * sizeof(float));
    scoring->maxima = malloc((size_t)g->densities / group_size * sizeof(float));
    scoring->scratch = malloc((size_t)longest * g->densities * sizeof(float));
    scoring->terms = malloc((size_t)g->codebooks * g->streams * model->top_count * sizeof(mixing_term));
    scoring->ready = malloc((size_t)g->codebooks);
    scoring->run_end = malloc((size_t)model->senones * sizeof(int32));
    if (scoring->distances == NULL || scoring->maxima == NULL || scoring->scratch == NULL || scoring->terms == NULL
        || scoring->ready == NULL || scoring->run_end == NULL) {
        release(scoring);
        return -1;
    }
    for (int32 i = model->senones - 1; i >= 0; --i) {
        const int same = i + 1 < model->senones && model->senone_codebook[i + 1] == model->senone_codebook[i];
        scoring->run_end[i] = same ? scoring->run_end[i + 1] : i + 1;
    }
    const logadd_t *table = LOGMATH_TABLE(model->log_math_8bit);
    const uint8 *entries = table->table;
    int zero_past_head = table->table_size > 0;
    for (uint32 i = head_length; zero_past_head && i < table->table_size; ++i) {
        zero_past_head = entries[i] == 0;
    }
    if (zero_past_head) {
        for (uint32 i = 0; i < head_length; ++i) {
            scoring->log_head[i] = i < table->table_size ? entries[i] : 0;
        }
        scoring->log_table_size = (int32)table->table_size;
    }
    __builtin_cpu_init();
    /* The 16-bit lanes of `score_run_wide` hold every sum: at most a weight and the most
     * negative score a stream, and a difference within the table. */
    const int fits = g->streams * (255 + most_negative_score) <= INT16_MAX && table->table_size <= INT16_MAX;
    scoring->avx2 = avx2 && __builtin_cpu_supports("avx2");
    scoring->wide = zero_past_head && fits && scoring->avx2;
    regroup(scoring, model, 0);
    sphinx_mgau *mgau = ((const sphinx_decoder_head *)decoder)->acoustic_model->mgau;
    scoring->original = mgau->functions;
    scoring->functions = *mgau->functions;
    scoring->functions.frame_eval = frame_eval;
    scoring->functions.transform = transform;
    scoring->functions.free = free_mgau;
    mgau->functions = &scoring->functions;
    return 0;
}

/* ---- The senone scores of an utterance, written where Heed says ---- */

/* acmod.c: closes the stream the scores went to, if any, and writes the header of `-senlogdir`'s
 * files to `file` (when not NULL), each frame's scores after it. Exported, not installed. */
int acmod_set_senfh(sphinx_acoustic_model *acoustic_model, FILE *file);

int heed_write_scores(void *raw, FILE *file) {
    sphinx_acoustic_model *acoustic = checked_acoustic_model(raw);
    if (acoustic == NULL) {
        return -1;
    }
    return acmod_set_senfh(acoustic, file) < 0 ? -1 : 0;
}
