/*
 * ts2diff_simd.h - constant tables shared by the TS_2DIFF SIMD decode kernels (spec §3.1 packing).
 *
 * Unpack scheme (w <= 25): a 128-bit vector holds 4 consecutive w-bit fields. Vector j of a block
 * starts at bit 4*j*w, i.e. at byte (4*j*w) >> 3 with a bit phase of 0 or 4 (4 only when j*w is
 * odd). Inside the vector, field k starts at bit ph + k*w: a byte shuffle gathers the 4 big-endian
 * bytes starting at byte (ph + k*w) >> 3 into lane k (reversed, so the lane reads as a BE32), a
 * variable left shift by (ph + k*w) & 7 drops the bits in front, and a right shift by 32 - w keeps
 * the field. The field ends within 4 bytes because 7 + w <= 32, and the highest byte touched is
 * (4 + 3*25) >> 3 + 3 = 12 < 16.
 * TD_CTRL[w][p] / TD_SHL[w][p] are the shuffle control and shift counts for phase p*4*(w&1).
 */
#ifndef TSF_TS2DIFF_SIMD_H
#define TSF_TS2DIFF_SIMD_H

#include <stdint.h>

#define TD_SIMD_MAXW 25

#define TD_B(w, ph, k) (((ph) + (k) * (w)) >> 3)
#define TD_C4(w, ph, k)                                                                                      \
    (uint8_t)(TD_B(w, ph, k) + 3), (uint8_t)(TD_B(w, ph, k) + 2), (uint8_t)(TD_B(w, ph, k) + 1),             \
        (uint8_t)(TD_B(w, ph, k))
#define TD_CTRL16(w, ph)                                                                                     \
    {                                                                                                        \
        TD_C4(w, ph, 0), TD_C4(w, ph, 1), TD_C4(w, ph, 2), TD_C4(w, ph, 3)                                   \
    }
#define TD_CROW(w)                                                                                           \
    {                                                                                                        \
        TD_CTRL16(w, 0), TD_CTRL16(w, 4 * ((w)&1))                                                           \
    }
#define TD_S(w, ph, k) (uint32_t)(((ph) + (k) * (w)) & 7)
#define TD_SHL4(w, ph)                                                                                       \
    {                                                                                                        \
        TD_S(w, ph, 0), TD_S(w, ph, 1), TD_S(w, ph, 2), TD_S(w, ph, 3)                                       \
    }
#define TD_SROW(w)                                                                                           \
    {                                                                                                        \
        TD_SHL4(w, 0), TD_SHL4(w, 4 * ((w)&1))                                                               \
    }

#define TD_ROWS(R)                                                                                           \
    R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7), R(8), R(9), R(10), R(11), R(12), R(13), R(14), R(15),    \
        R(16), R(17), R(18), R(19), R(20), R(21), R(22), R(23), R(24), R(25)

static const uint8_t TD_CTRL[TD_SIMD_MAXW + 1][2][16] __attribute__((aligned(16))) = {TD_ROWS(TD_CROW)};
static const uint32_t TD_SHL[TD_SIMD_MAXW + 1][2][4] __attribute__((aligned(16))) = {TD_ROWS(TD_SROW)};

#endif
