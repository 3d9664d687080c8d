/*
 * radio_harness.c - N simavr ATmega128s in lockstep on one cc1000_air.
 *
 *   radio_harness SECONDS ELF0 [ELF1 ...]
 *
 * Node i runs ELFi with a cc1000_part whose receiver sits (3i + 1) mod 8 bits
 * off the senders' byte boundaries. All cores advance in rounds of QUANTUM
 * cycles (each stops at the first instruction boundary at or past the round's
 * end), so their clocks never drift apart by more than a round plus one
 * sleep skip, which is at most one radio tick (the part's tick timer is
 * always armed). After SECONDS of simulated time each node's `radio_report_v`
 * (radio_test_main.c) and its part's counters are printed as one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>

#include "cc1000_part.h"

#define F_CPU_HZ 7372800u
#define QUANTUM 256u
#define REPORT_WORDS 21u /* radio_report: 13 words + cc1000_stats (8 words) */

static const char *const FIELDS[REPORT_WORDS] = {
    "magic", "sent", "refused", "done", "acked", "frame_starts", "received", "gaps", "dups",
    "foreign", "floor", "retries", "lost", "rx_ok", "rx_crc_fail", "tx_frames", "tx_acked", "acks_sent",
    "busy_polls", "gave_up", "cal_timeouts"};

typedef struct node {
    avr_t *avr;
    elf_firmware_t fw;
    cc1000_part part;
    uint32_t report_addr;
} node;

static void no_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    (void)avr;
    (void)how_long;
}

static uint32_t find_symbol(const elf_firmware_t *fw, const char *name)
{
    uint32_t i;
    for (i = 0; i < fw->symbolcount; i++)
        if (strcmp(fw->symbol[i]->symbol, name) == 0)
            return fw->symbol[i]->addr & 0xFFFFu; /* data addresses carry 0x800000 */
    return 0;
}

static int load(node *n, const char *path, cc1000_air *air, uint32_t index)
{
    memset(&n->fw, 0, sizeof n->fw);
    if (elf_read_firmware(path, &n->fw) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    n->avr = avr_make_mcu_by_name("atmega128");
    if (!n->avr || avr_init(n->avr) != 0)
        return -1;
    avr_load_firmware(n->avr, &n->fw);
    n->avr->frequency = F_CPU_HZ;
    n->avr->vcc = n->avr->avcc = n->avr->aref = 3000;
    n->avr->sleep = no_sleep;
    n->avr->log = 0;
    n->report_addr = find_symbol(&n->fw, "radio_report_v");
    if (!n->report_addr) {
        fprintf(stderr, "%s has no radio_report_v\n", path);
        return -1;
    }
    return cc1000_part_init(&n->part, n->avr, air, cc1000_mica2_wiring(),
                            (uint8_t)((3u * index + 1u) % 8u), 0x9e3779b9u * (index + 1u));
}

static void print_report(const node *n, uint32_t index)
{
    uint32_t i;
    printf("{\"node\": %u", index);
    for (i = 0; i < REPORT_WORDS; i++) {
        uint32_t a = n->report_addr + 2u * i;
        printf(", \"%s\": %u", FIELDS[i], n->avr->data[a] | n->avr->data[a + 1u] << 8);
    }
    printf(", \"part_cal\": %llu, \"part_writes\": %llu, \"part_reads\": %llu, \"part_tx_bytes\": %llu,"
           " \"part_rx_bytes\": %llu, \"part_collided_rx\": %llu, \"cycles\": %llu}\n",
           (unsigned long long)n->part.cnt.calibrations, (unsigned long long)n->part.cnt.reg_writes,
           (unsigned long long)n->part.cnt.reg_reads, (unsigned long long)n->part.cnt.bytes_tx,
           (unsigned long long)n->part.cnt.bytes_rx, (unsigned long long)n->part.cnt.collided_rx,
           (unsigned long long)n->avr->cycle);
}

int main(int argc, char **argv)
{
    static cc1000_air air;
    node *nodes;
    uint32_t count, i;
    avr_cycle_count_t end, target = 0;
    double seconds;
    if (argc < 3 || (seconds = atof(argv[1])) <= 0.0) {
        fprintf(stderr, "usage: %s SECONDS ELF0 [ELF1 ...]\n", argv[0]);
        return 2;
    }
    count = (uint32_t)(argc - 2);
    if (count > CC1000_AIR_MAX)
        return 2;
    nodes = calloc(count, sizeof *nodes);
    if (!nodes)
        return 1;
    cc1000_air_init(&air);
    for (i = 0; i < count; i++)
        if (load(&nodes[i], argv[2 + i], &air, i) != 0)
            return 1;
    end = (avr_cycle_count_t)(seconds * F_CPU_HZ);
    while (target < end) {
        target += QUANTUM;
        for (i = 0; i < count; i++) {
            avr_t *avr = nodes[i].avr;
            while (avr->cycle < target) {
                int st = avr_run(avr);
                if (st == cpu_Done || st == cpu_Crashed) {
                    fprintf(stderr, "node %u stopped (state %d) at cycle %llu\n", i, st,
                            (unsigned long long)avr->cycle);
                    return 1;
                }
            }
        }
    }
    for (i = 0; i < count; i++)
        print_report(&nodes[i], i);
    printf("{\"air_overlap_bytes\": %llu}\n", (unsigned long long)air.overlap_bytes);
    return 0;
}
