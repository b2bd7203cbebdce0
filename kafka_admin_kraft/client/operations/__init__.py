"""One module per admin operation, each a sans-I/O generator on :class:`~..core.AdminCore`."""
