"""The Redis stream layout and connection, shared by the Redis sink and source.

``streams`` holds the entry layout (``start`` / event / ``end`` entries and their
ids), ``link`` the reconnecting redis-py client, ``tailer`` the one shared live read
(``XREAD BLOCK`` over every key a process tails); neither ``sinks/`` nor ``sources/``
imports the other, both import these.
"""
