"""The ``guard`` command line: one module per command group, loaded on demand.

``guard <command>`` imports the one group that registers the command (``guard.cli.main.COMMANDS`` names it; ``guard``
and ``--help`` list the commands from that table and import none), so a group imports guard's modules at its top.
Inside a function wait only the third-party libraries a command uses on one branch (rich for a person, the web
stack of the serve and view extras, which must be named before it is imported): tests/project/test_imports.py.
"""
