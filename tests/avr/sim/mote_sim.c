/*
 * mote_sim.c - one mica2 image under simavr, its UART0 on a pty.
 *
 *   mote_sim [--light N] [--temp N] [--node-id N] [--freq HZ] build/avr/mica2.elf
 *
 * Prints the pty's path as its first stdout line (then flushes), runs the image
 * paced to wall time until SIGTERM or SIGINT, then prints one JSON line of stats
 * -- cycles in all, asleep per sleep mode, the stack high-water mark, the RAM the
 * image's .data/.bss take -- and exits 0. --node-id patches TOS_LOCAL_ADDRESS's
 * initial value in the loaded flash, where `mote flash` patches the image.
 * The parts: pacer (wall-time pacing), sleep_meter, stack_painter, adc_feeder,
 * and libsimavrparts' uart_pty.
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
#include "pacer.h"
#include "sleep_meter.h"
#include "stack_painter.h"

#define DATA_SPACE 0x800000u /* the GNU linker's offset of SRAM addresses */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

typedef struct options {
    const char *elf;
    long light, temp, node_id;
    unsigned long freq;
} options;

static int parse(int argc, char **argv, options *o)
{
    int i;
    o->elf = NULL;
    o->light = 512;
    o->temp = 300;
    o->node_id = -1;
    o->freq = 7372800ul;
    for (i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--light") == 0)
            o->light = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--temp") == 0)
            o->temp = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--node-id") == 0)
            o->node_id = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--freq") == 0)
            o->freq = strtoul(argv[++i], NULL, 0);
        else if (argv[i][0] != '-' && !o->elf)
            o->elf = argv[i];
        else
            return -1;
    }
    if (!o->elf || o->light < 0 || o->light > 1023 || o->temp < 0 || o->temp > 1023 ||
        o->node_id > 0xFFFF)
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

static void print_stats(avr_t *avr, const sleep_meter_t *m, const stack_painter_t *s,
                        const adc_feeder_t *f, const pacer_t *p, uint32_t static_ram)
{
    unsigned i;
    uint64_t asleep = 0;
    printf("{\"cycles\": %llu, \"frequency\": %u, \"sleep_cycles\": {",
           (unsigned long long)avr->cycle, avr->frequency);
    for (i = 0; i < SLEEP_MODES; i++) {
        asleep += m->cycles[i];
        printf("%s\"%s\": %llu", i ? ", " : "", sleep_mode_name(i),
               (unsigned long long)m->cycles[i]);
    }
    printf("}, \"sleeps\": {");
    for (i = 0; i < SLEEP_MODES; i++)
        printf("%s\"%s\": %llu", i ? ", " : "", sleep_mode_name(i),
               (unsigned long long)m->sleeps[i]);
    printf("}, \"asleep_cycles\": %llu, \"stack_high_water\": %u, \"static_ram\": %u, "
           "\"adc_conversions\": %u, \"light_reads\": %u, \"temp_reads\": %u, "
           "\"pacer_slept_ms\": %llu, \"state\": %d}\n",
           (unsigned long long)asleep, stack_painter_high_water(s), static_ram,
           f->conversions, f->light_reads, f->temp_reads,
           (unsigned long long)(p->slept_ns / 1000000ull), avr->state);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    options o;
    elf_firmware_t fw;
    avr_t *avr;
    uart_pty_t pty;
    pacer_t pacer;
    sleep_meter_t meter;
    stack_painter_t painter;
    adc_feeder_t feeder;
    uint32_t end;
    struct sigaction sa;
    int saved_stdout;
    sigset_t stop_signals;

    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: %s [--light 0..1023] [--temp 0..1023] [--node-id N] "
                        "[--freq HZ] IMAGE.elf\n", argv[0]);
        return 2;
    }
    memset(&fw, 0, sizeof fw);
    /* simavr prints its banners on stdout: the pty line must be the first one there. */
    saved_stdout = banners_to_stderr();
    if (elf_read_firmware(o.elf, &fw)) {
        fprintf(stderr, "mote_sim: cannot read %s\n", o.elf);
        return 1;
    }
    avr = avr_make_mcu_by_name("atmega128");
    if (avr) {
        avr_init(avr);
        avr_load_firmware(avr, &fw);
        avr->frequency = (uint32_t)o.freq;
    }
    if (!avr) {
        fprintf(stderr, "mote_sim: simavr has no atmega128\n");
        return 1;
    }
    if (symbol(&fw, "_end", &end)) {
        fprintf(stderr, "mote_sim: %s has no _end symbol\n", o.elf);
        return 1;
    }
    end -= DATA_SPACE;
    if (o.node_id >= 0 && patch_node_id(avr, &fw, (uint16_t)o.node_id)) {
        fprintf(stderr, "mote_sim: cannot patch TOS_LOCAL_ADDRESS in %s\n", o.elf);
        return 1;
    }
    if (adc_feeder_init(avr, &feeder, (uint16_t)o.light, (uint16_t)o.temp)) {
        fprintf(stderr, "mote_sim: no ADC\n");
        return 1;
    }
    stack_painter_init(avr, &painter, (uint16_t)end);
    sleep_meter_init(avr, &meter);

    /* The pty's thread inherits a mask blocking SIGTERM/SIGINT: they must reach this
     * thread, to end the run loop, and not that one. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    uart_pty_init(avr, &pty);
    uart_pty_connect(&pty, '0');
    stdout_back(saved_stdout);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
    printf("%s\n", pty.port[0].slavename);
    fflush(stdout);

    pacer_init(avr, &pacer);
    while (!stop) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed)
            break;
    }
    print_stats(avr, &meter, &painter, &feeder, &pacer, (uint32_t)(end - 0x100u));
    /* Not uart_pty_stop: Debian's joins a pty thread that never returns. Exiting ends it. */
    return avr->state == cpu_Crashed ? 1 : 0;
}
