"""Network emulator: the firmware core compiled through cffi, many nodes in virtual time."""
