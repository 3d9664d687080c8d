"""The `mote` command line: a host that collects each layer's subcommands."""
