"""The consensus core: a deterministic state machine with no I/O of its own (see ``api``)."""
