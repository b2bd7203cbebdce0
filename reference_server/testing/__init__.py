"""Reference quorums for users' own tests: a pytest plugin and the quorum object it hands out.

``plugin`` is what pytest loads (the ``pytest11`` entry point): fixtures and a marker, nothing started
until a test asks, and an import that costs next to nothing. ``quorum`` is ``KraftQuorum``: real
reference-server processes on 127.0.0.1 (``local``), their addresses, clients and files, the faults a
test scripts (``faults``) and the waits. ``security`` turns PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
into server and client settings; ``pki`` makes the test certificates (with the ``cryptography``
package).
"""
