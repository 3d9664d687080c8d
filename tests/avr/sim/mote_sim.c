/*
 * mote_sim.c - N mica2 images under simavr on one modelled CC1000 air, node 0's
 * UART0 on a pty.
 *
 *   mote_sim [--motes N] [--light L[,L...]] [--temp T[,T...]] [--node-id FIRST]
 *            [--freq HZ] build/avr/mica2.elf
 *
 * Every node runs the same image with its own TOS_LOCAL_ADDRESS, patched in the
 * loaded flash where `mote flash` patches the image: FIRST + i for node i (FIRST
 * defaults to 0 with two or more motes; one mote keeps the image's id unless
 * --node-id is given). --light and --temp give one ADC value for all nodes or
 * one per node. Each node has its parts: sleep_meter, stack_painter, adc_feeder
 * and a cc1000_part on the shared air (its receiver (3i + 1) mod 8 bits off the
 * senders' byte boundaries). Node 0 also has libsimavrparts' uart_pty and the
 * pacer (wall-time pacing; it paces all, since they run in lockstep).
 *
 * Lockstep: the cores advance in rounds of QUANTUM cycles, each stopping at the
 * first instruction boundary at or past the round's end; a sleeping core skips
 * at most to its next cycle timer, and the radio part's byte tick is always
 * armed, so no two clocks drift apart by more than about one radio byte time,
 * which the air's delay absorbs (cc1000_part.h).
 *
 * Prints the pty's path as its first stdout line (then flushes), runs until
 * SIGTERM or SIGINT, then prints one JSON line of stats and exits 0. SIGUSR1
 * prints the same line as a snapshot and runs on. Per node: cycles, cycles and
 * sleeps per sleep mode, the stack high-water mark, the RAM .data/.bss take,
 * ADC reads, and the radio part's counters (frames and acks sent and heard on
 * the air, bytes, collisions).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simavr/parts/uart_pty.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>

#include "adc_feeder.h"
#include "cc1000_part.h"
#include "pacer.h"
#include "sleep_meter.h"
#include "stack_painter.h"

#define DATA_SPACE 0x800000u /* the GNU linker's offset of SRAM addresses */
#define MOTES_MAX 3u
#define QUANTUM 256u

static volatile sig_atomic_t stop, snapshot;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        snapshot = 1;
    else
        stop = 1;
}

typedef struct options {
    const char *elf;
    unsigned motes;
    long light[MOTES_MAX], temp[MOTES_MAX];
    unsigned n_light, n_temp;
    long node_id;
    unsigned long freq;
} options;

typedef struct mote {
    avr_t *avr;
    uint16_t id;
    sleep_meter_t meter;
    stack_painter_t painter;
    adc_feeder_t feeder;
    cc1000_part radio;
} mote;

/* "617" or "617,400,212": up to MOTES_MAX ADC counts; their number, or 0 if malformed. */
static unsigned parse_counts(const char *s, long *out)
{
    unsigned n = 0;
    char *end;
    for (;;) {
        if (n == MOTES_MAX)
            return 0;
        out[n] = strtol(s, &end, 0);
        if (end == s || out[n] < 0 || out[n] > 1023)
            return 0;
        n++;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return 0;
        s = end + 1;
    }
}

static int parse(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->motes = 1;
    o->light[0] = 512;
    o->temp[0] = 300;
    o->n_light = o->n_temp = 1;
    o->node_id = -1;
    o->freq = 7372800ul;
    for (i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--motes") == 0)
            o->motes = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--light") == 0)
            o->n_light = parse_counts(argv[++i], o->light);
        else if (i + 1 < argc && strcmp(argv[i], "--temp") == 0)
            o->n_temp = parse_counts(argv[++i], o->temp);
        else if (i + 1 < argc && strcmp(argv[i], "--node-id") == 0)
            o->node_id = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--freq") == 0)
            o->freq = strtoul(argv[++i], NULL, 0);
        else if (argv[i][0] != '-' && !o->elf)
            o->elf = argv[i];
        else
            return -1;
    }
    if (o->motes > 1 && o->node_id < 0)
        o->node_id = 0;
    if (!o->elf || o->motes < 1 || o->motes > MOTES_MAX || o->node_id < -1 ||
        o->node_id + (long)o->motes > 0x10000 ||
        (o->n_light != 1 && o->n_light != o->motes) || (o->n_temp != 1 && o->n_temp != o->motes))
        return -1;
    return 0;
}

static int banners_to_stderr(void)
{
    int saved;
    fflush(stdout);
    saved = dup(1);
    dup2(2, 1);
    return saved;
}

static void stdout_back(int saved)
{
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
}

static int symbol(const elf_firmware_t *fw, const char *name, uint32_t *addr)
{
    uint32_t i;
    for (i = 0; i < fw->symbolcount; i++)
        if (strcmp(fw->symbol[i]->symbol, name) == 0) {
            *addr = fw->symbol[i]->addr;
            return 0;
        }
    return -1;
}

/* TOS_LOCAL_ADDRESS's initial value lives in flash at
 * __data_load_start + (TOS_LOCAL_ADDRESS - __data_start), little endian. */
static int patch_node_id(avr_t *avr, const elf_firmware_t *fw, uint16_t id)
{
    uint32_t load, start, sym, at;
    if (symbol(fw, "__data_load_start", &load) || symbol(fw, "__data_start", &start) ||
        symbol(fw, "TOS_LOCAL_ADDRESS", &sym))
        return -1;
    at = load + (sym - start);
    if (at + 1u > avr->flashend)
        return -1;
    avr->flash[at] = (uint8_t)id;
    avr->flash[at + 1u] = (uint8_t)(id >> 8);
    return 0;
}

static void print_modes(const char *key, const uint64_t *by_mode)
{
    unsigned i;
    printf(", \"%s\": {", key);
    for (i = 0; i < SLEEP_MODES; i++)
        printf("%s\"%s\": %llu", i ? ", " : "", sleep_mode_name(i),
               (unsigned long long)by_mode[i]);
    printf("}");
}

static void print_radio(const cc1000_counters *c)
{
    printf(", \"radio\": {\"frames_sent\": %llu, \"acks_sent\": %llu, \"frames_received\": %llu, "
           "\"acks_received\": %llu, \"bad_frames_received\": %llu, \"bytes_sent\": %llu, "
           "\"bytes_received\": %llu, \"collided_bytes\": %llu, \"calibrations\": %llu}",
           (unsigned long long)c->frames_tx, (unsigned long long)c->acks_tx,
           (unsigned long long)c->frames_rx, (unsigned long long)c->acks_rx,
           (unsigned long long)c->bad_frames_rx, (unsigned long long)c->bytes_tx,
           (unsigned long long)c->bytes_rx, (unsigned long long)c->collided_rx,
           (unsigned long long)c->calibrations);
}

static void print_mote(const mote *m, uint32_t static_ram)
{
    unsigned i;
    uint64_t asleep = 0;
    for (i = 0; i < SLEEP_MODES; i++)
        asleep += m->meter.cycles[i];
    printf("{\"id\": %u, \"cycles\": %llu", m->id, (unsigned long long)m->avr->cycle);
    print_modes("sleep_cycles", m->meter.cycles);
    print_modes("sleeps", m->meter.sleeps);
    printf(", \"asleep_cycles\": %llu, \"stack_high_water\": %u, \"static_ram\": %u, "
           "\"adc_conversions\": %u, \"light_reads\": %u, \"temp_reads\": %u, \"state\": %d",
           (unsigned long long)asleep, stack_painter_high_water(&m->painter), static_ram,
           m->feeder.conversions, m->feeder.light_reads, m->feeder.temp_reads, m->avr->state);
    print_radio(&m->radio.cnt);
    printf("}");
}

static void print_stats(const mote *motes, unsigned n, const pacer_t *p, const cc1000_air *air,
                        uint32_t static_ram)
{
    unsigned i;
    printf("{\"frequency\": %u, \"pacer_slept_ms\": %llu, \"air_overlap_bytes\": %llu, "
           "\"nodes\": [",
           motes[0].avr->frequency, (unsigned long long)(p->slept_ns / 1000000ull),
           (unsigned long long)air->overlap_bytes);
    for (i = 0; i < n; i++) {
        printf("%s", i ? ", " : "");
        print_mote(&motes[i], static_ram);
    }
    printf("]}\n");
    fflush(stdout);
}

static int make_mote(mote *m, unsigned i, const options *o, elf_firmware_t *fw, cc1000_air *air,
                     uint16_t ram_free_start)
{
    m->avr = avr_make_mcu_by_name("atmega128");
    if (!m->avr || avr_init(m->avr) != 0) {
        fprintf(stderr, "mote_sim: simavr has no atmega128\n");
        return -1;
    }
    avr_load_firmware(m->avr, fw);
    m->avr->frequency = (uint32_t)o->freq;
    m->id = (uint16_t)(o->node_id + (long)i);
    if (o->node_id >= 0 && patch_node_id(m->avr, fw, m->id)) {
        fprintf(stderr, "mote_sim: cannot patch TOS_LOCAL_ADDRESS in %s\n", o->elf);
        return -1;
    }
    if (o->node_id < 0)
        m->id = 1; /* the image's own default */
    if (adc_feeder_init(m->avr, &m->feeder, (uint16_t)o->light[o->n_light == 1 ? 0 : i],
                        (uint16_t)o->temp[o->n_temp == 1 ? 0 : i])) {
        fprintf(stderr, "mote_sim: no ADC\n");
        return -1;
    }
    stack_painter_init(m->avr, &m->painter, ram_free_start);
    if (sleep_meter_init(m->avr, &m->meter) ||
        cc1000_part_init(&m->radio, m->avr, air, cc1000_mica2_wiring(),
                         (uint8_t)((3u * i + 1u) % 8u), 0x9e3779b9u * (i + 1u))) {
        fprintf(stderr, "mote_sim: cannot attach node %u's parts\n", i);
        return -1;
    }
    return 0;
}

/* One round: every core up to `target` cycles. -1 if one stopped. */
static int run_round(mote *motes, unsigned n, avr_cycle_count_t target)
{
    unsigned i;
    for (i = 0; i < n; i++)
        while (motes[i].avr->cycle < target) {
            int state = avr_run(motes[i].avr);
            if (state == cpu_Done || state == cpu_Crashed) {
                fprintf(stderr, "mote_sim: node %u stopped (state %d) at cycle %llu\n", i, state,
                        (unsigned long long)motes[i].avr->cycle);
                return -1;
            }
        }
    return 0;
}

int main(int argc, char **argv)
{
    static options o;
    static elf_firmware_t fw;
    static mote motes[MOTES_MAX];
    static cc1000_air air;
    static uart_pty_t pty; /* the pty thread reads it until the process ends */
    pacer_t pacer;
    uint32_t end;
    unsigned i;
    struct sigaction sa;
    int saved_stdout, failed = 0;
    sigset_t signals;
    avr_cycle_count_t target = 0;

    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: %s [--motes 1..%u] [--light L[,L...]] [--temp T[,T...]] "
                        "[--node-id FIRST] [--freq HZ] IMAGE.elf\n", argv[0], MOTES_MAX);
        return 2;
    }
    /* simavr prints its banners on stdout: the pty line must be the first one there. */
    saved_stdout = banners_to_stderr();
    if (elf_read_firmware(o.elf, &fw)) {
        fprintf(stderr, "mote_sim: cannot read %s\n", o.elf);
        return 1;
    }
    if (symbol(&fw, "_end", &end)) {
        fprintf(stderr, "mote_sim: %s has no _end symbol\n", o.elf);
        return 1;
    }
    end -= DATA_SPACE;
    cc1000_air_init(&air);
    for (i = 0; i < o.motes; i++)
        if (make_mote(&motes[i], i, &o, &fw, &air, (uint16_t)end))
            return 1;

    /* The pty's thread inherits a mask blocking our signals: they must reach this
     * thread, to end the run loop, and not that one. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    uart_pty_init(motes[0].avr, &pty);
    uart_pty_connect(&pty, '0');
    stdout_back(saved_stdout);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, &signals, NULL);
    printf("%s\n", pty.port[0].slavename);
    fflush(stdout);

    pacer_init(motes[0].avr, &pacer);
    while (!stop && !failed) {
        target += QUANTUM;
        failed = run_round(motes, o.motes, target);
        if (snapshot) {
            snapshot = 0;
            print_stats(motes, o.motes, &pacer, &air, (uint32_t)(end - 0x100u));
        }
    }
    print_stats(motes, o.motes, &pacer, &air, (uint32_t)(end - 0x100u));
    /* Not uart_pty_stop: Debian's joins a pty thread that never returns. _exit ends that
     * thread with the process at once: returning from main would let it run on through
     * exit handlers, select()ing on a torn-down port (glibc aborts: "bit out of range
     * 0 - FD_SETSIZE on fd_set", seen once in CI). */
    fflush(stdout);
    fflush(stderr);
    _exit(failed ? 1 : 0);
}
