#!/bin/sh
# Make a clang with libFuzzer available, from the distribution: CI machines start clean.
# Debian's clang package only *recommends* the compiler-rt runtime that holds libFuzzer
# and the sanitizers, so --no-install-recommends needs libclang-rt-dev named as well.
# Exit 0: "$CC" (default clang) links -fsanitize=fuzzer,address,undefined.
# Exit 3: not available and not installable here (no apt-get, not root): callers skip.
CC=${CC:-clang}

probe() {
    command -v "$CC" >/dev/null 2>&1 || return 1
    dir=$(mktemp -d) || return 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
        >"$dir/p.c"
    "$CC" -fsanitize=fuzzer,address,undefined "$dir/p.c" -o "$dir/p" >/dev/null 2>&1
    rc=$?
    rm -rf "$dir"
    return $rc
}

probe && exit 0

"$(dirname "$0")/../apt_install.sh" fuzz clang libclang-rt-dev ||
    { echo "fuzz: no clang with libFuzzer: skipping the firmware fuzzer" >&2; exit 3; }

CC=clang
if probe; then exit 0; fi
echo "fuzz: clang installed but -fsanitize=fuzzer does not link: skipping the firmware fuzzer" >&2
exit 3
