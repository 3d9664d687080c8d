#!/bin/sh
# Build the firmware libFuzzer harness with clang (ASan + UBSan) and run it.
#   tests/fuzz/run_firmware.sh SECONDS [libFuzzer options...]
# FUZZ_BUILD: build and working-corpus directory (default build/fuzz). New inputs go
# there; the checked-in seeds in tests/fuzz/corpus/firmware are only read. A crash
# leaves its input as $FUZZ_BUILD/crash-* and fails the run: replay it with
#   $FUZZ_BUILD/firmware_fuzz $FUZZ_BUILD/crash-...
# Without clang and no way to install it (tests/fuzz/ensure_clang.sh) it skips, exit 0.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$root/build/fuzz}

rc=0
"$here/ensure_clang.sh" || rc=$?
if [ "$rc" = 3 ]; then
    echo "fuzz: firmware fuzzer SKIPPED (no clang with libFuzzer here)"
    exit 0
elif [ "$rc" != 0 ]; then
    exit "$rc"
fi

mkdir -p "$build/corpus-firmware"
# trace-cmp (libFuzzer's comparison tracing) is left out: it makes each input ~3x
# slower here, and the seeds already hold the AM types, magics and valid layouts it
# would have to discover. FUZZ_CFLAGS adds flags (e.g. -fsanitize-coverage=trace-cmp).
# shellcheck disable=SC2046,SC2086
${CC:-clang} -std=c99 -Wall -Wextra -Werror -pedantic -O2 -gline-tables-only \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-sanitize-coverage=trace-cmp \
    ${FUZZ_CFLAGS:-} -I"$root/firmware" "$here/firmware_fuzz.c" \
    $(find "$root/firmware" -name '*.c' -not -path '*/tests/*' -not -path '*/avr/*' | sort) \
    -o "$build/firmware_fuzz"

echo "fuzz: firmware harness for ${seconds}s"
exec "$build/firmware_fuzz" -max_total_time="$seconds" -max_len=1024 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/" "$@" \
    "$build/corpus-firmware" "$here/corpus/firmware"
