"""The Python basestation: protocol definitions, TinySQL, query sessions, result log."""
