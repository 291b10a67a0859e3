"""What guard keeps on disk that others share: the SQLite connection and migrations, and the per-user secret that seals state.

The decision cache, the audit log and ``guard view`` all open SQLite files the same
way (``database``), and every record an agent could rewrite is sealed under one
secret (``secret``).
"""
