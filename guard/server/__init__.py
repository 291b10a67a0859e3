"""``guard serve``: the HTTP service, and the stdlib client ``guard hook --server`` uses.

``app`` and ``metrics`` need starlette and are imported only by ``guard serve``;
``client`` is standard library only (it runs inside ``guard hook``). Nothing is
re-exported here, so importing the client never loads the server.
"""
