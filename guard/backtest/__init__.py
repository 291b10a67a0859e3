"""``guard backtest``: what a config change would have decided on past traffic.

``events`` reads the audit log and keeps the rows that can be replayed faithfully;
``replay`` decides them again through a :class:`~guard.runtime.gate.Gate` that
writes no audit row; ``session`` compares the new decisions with the recorded ones
(or an OLD config's) and writes the same files as ``guard eval`` through its writers.
"""
