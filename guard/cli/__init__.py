"""The ``guard`` command line: one module per command group.

``guard --help`` and every command but ``guard hook`` import all of these modules to build the parser, so what
one of them imports at its top every command pays: a command's own machinery (the eval package, starlette,
the sandbox …) is imported inside the function that runs it, marked ``# lazy:``.
"""
