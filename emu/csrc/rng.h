/*
 * rng.h - the emulator's own pseudo-random numbers (never libc rand()).
 *
 * splitmix64 expands a user seed into independent stream states; xorshift64*
 * is the generator. Every random decision of a run (backoffs, link losses,
 * sensor noise, each node's hal.rand16) draws from a stream derived from the
 * one network seed, so a seed fixes the run.
 */
#ifndef EMU_RNG_H
#define EMU_RNG_H

#include <stdint.h>

typedef struct emu_rng {
    uint64_t s;
} emu_rng;

static inline uint64_t emu_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Stream `stream` of `seed`; never the all-zero state xorshift cannot leave. */
static inline void emu_rng_seed(emu_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = emu_splitmix64(seed ^ emu_splitmix64(stream + 1u));
    if (r->s == 0)
        r->s = 0x2545F4914F6CDD1Dull;
}

static inline uint64_t emu_rng_next(emu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1). */
static inline double emu_rng_unit(emu_rng *r)
{
    return (double)(emu_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t emu_rng_below(emu_rng *r, uint32_t n)
{
    return (uint32_t)(((emu_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

#endif /* EMU_RNG_H */
