"""The consensus core: a deterministic state machine with no I/O of its own (see ``api``).

- ``core``: ``RaftCore``, election and replication; ``context``: the view of it its handlers get;
- ``add_voter``, ``remove_voter``, ``update_voter``, ``follower_voter`` and ``changes``: voter changes;
- ``fetch_snapshot`` and ``image_work``: snapshots and the committed metadata image;
- ``state``, ``leader``, ``voters``, ``image``, ``describe``, ``rpc`` and ``errors``: what they use.
"""
