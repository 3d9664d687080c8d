#!/bin/sh
# Make the AVR cross toolchain and simavr available, from the distribution: CI machines
# start clean and nothing may be hand-installed. The images need gcc-avr, binutils-avr and
# avr-libc; the one-mote harness (tests/avr/sim) links libsimavr/libsimavrparts from
# libsimavr-dev; `mote flash` calls avrdude.
# Exit 0: avr-gcc links an atmega128 program, simavr's headers and library are there,
#         avrdude runs.
# Exit 3: not available and not installable here (no apt-get, not root). Unlike the fuzz
#         env, the caller (tox env `avr`) FAILS on it: these tests are the only check of
#         the images, and a skipped check must not read as a pass.
AVR_PACKAGES="gcc-avr binutils-avr avr-libc simavr libsimavr-dev avrdude"

probe() {
    command -v avr-gcc >/dev/null 2>&1 || return 1
    command -v avr-size >/dev/null 2>&1 || return 1
    command -v avrdude >/dev/null 2>&1 || return 1
    [ -f /usr/include/simavr/sim_avr.h ] || return 1
    [ -f /usr/include/simavr/parts/uart_pty.h ] || return 1
    dir=$(mktemp -d) || return 1
    printf '%s\n' '#include <avr/io.h>' 'int main(void) { DDRA = 7; for (;;) {} }' >"$dir/p.c"
    avr-gcc -mmcu=atmega128 -Os "$dir/p.c" -o "$dir/p.elf" >/dev/null 2>&1 &&
        printf '%s\n' '#include <simavr/sim_avr.h>' \
            'int main(void) { return avr_make_mcu_by_name("atmega128") == 0; }' >"$dir/s.c" &&
        ${CC:-cc} "$dir/s.c" -o "$dir/s" -lsimavr >/dev/null 2>&1
    rc=$?
    rm -rf "$dir"
    return $rc
}

probe && exit 0

# shellcheck disable=SC2086
"$(dirname "$0")/../apt_install.sh" avr $AVR_PACKAGES || exit 3

if probe; then exit 0; fi
echo "avr: packages installed but avr-gcc or libsimavr does not build a probe" >&2
exit 3
