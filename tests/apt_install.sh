#!/bin/sh
# apt_install.sh TAG PACKAGE... - install Debian packages a test env needs, on a clean
# CI machine where nothing may be hand-installed. Root installs directly, others through
# passwordless sudo. A stale package list makes install fail on a fresh container, so the
# list is updated once on failure. Messages go to stderr, prefixed with TAG.
# Exit 0: installed. Exit 3: no apt-get, no root, or apt-get failed; the caller decides
# whether that skips (fuzz) or fails (avr) its env.
tag=$1
shift
if ! command -v apt-get >/dev/null 2>&1; then
    echo "$tag: $* missing and there is no apt-get here" >&2
    exit 3
fi
if [ "$(id -u)" = 0 ]; then
    SUDO=
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "$tag: $* missing and apt-get needs root" >&2
    exit 3
fi
echo "$tag: installing $* with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends "$@" >&2 ||
    { $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends "$@" >&2; } ||
    { echo "$tag: apt-get could not install $*" >&2; exit 3; }
