"""The ``guard`` command line: one module per command group, loaded on demand.

On demand for ``guard hook`` and ``guard serve``, which load their own module alone; ``guard --help`` and every other
command import all of them to build the parser, so what one of them imports at its top every command pays: a command's
own machinery (the eval package, starlette, the sandbox …) is imported inside the function that runs it, marked
``# lazy:``.
"""
