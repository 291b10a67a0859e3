"""Hook kinds, one module each (``smart``, ``command``, ``http``, ``callable``, ``protect``), behind one seam.

Each module's ``<Kind>Hook`` implements :class:`~guard.core.hook.Hook`; the
runtime finds them by kind name (:mod:`guard.runtime.kinds`), so nothing below
this package imports it.
"""
