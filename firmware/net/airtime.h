/*
 * airtime.h - how long the Mica2's radio takes to send a packet.
 *
 * Every timing rule of the schedule (core/schedule.h) and of the send path
 * (core/txpath.c) is a multiple of one frame on the air, so they are derived
 * here from the radio's rate and framing rather than written down as numbers.
 *
 * The CC1000 as TinyOS 1.x programs it for the Mica2 and Mica2Dot (MODEM0 with
 * the 14.7456 MHz crystal): 38.4 kBaud of Manchester chips, 19.2 kbit/s of
 * data, so one byte takes 8 / 19,200 s = 416.7 us (B-MAC's t_byte). Around each
 * TOS_Msg go 28 preamble bytes, the 2-byte sync word and the 2-byte CRC; the
 * CSMA stack first waits 1..32 byte times. The emulator's medium uses the same
 * figures (emu/csrc/platform.c); a test checks that they agree.
 */
#ifndef MOTE_NET_AIRTIME_H
#define MOTE_NET_AIRTIME_H

#include "mhop.h"

#define RADIO_DATA_BPS 19200u
#define RADIO_FRAME_OVERHEAD 32u  /* preamble 28 + sync 2 + CRC 2 */
#define RADIO_BACKOFF_BYTES 32u   /* the initial CSMA backoff's longest draw */

/* Whole milliseconds, rounded up, of `bytes` on the air. */
#define RADIO_BYTES_MS(bytes) (((bytes) * 8000u + RADIO_DATA_BPS - 1u) / RADIO_DATA_BPS)

/* The longest frame, a full TOS_Msg: 86 bytes, 36 ms. */
#define RADIO_FRAME_MS RADIO_BYTES_MS(TOS_MSG_MAX + RADIO_FRAME_OVERHEAD)
/* From a send's start to the end of its frame at worst: backoff + frame, 50 ms. */
#define RADIO_SEND_MS (RADIO_BYTES_MS(RADIO_BACKOFF_BYTES) + RADIO_FRAME_MS)

#endif /* MOTE_NET_AIRTIME_H */
