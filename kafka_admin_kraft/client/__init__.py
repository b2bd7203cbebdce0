"""The admin client's machinery: configuration, the sans-I/O core, transports and one module per
admin operation (``operations``). The public face is :mod:`kafka_admin_kraft.admin`."""
