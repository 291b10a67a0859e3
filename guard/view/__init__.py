"""``guard view``: a local web view of the audit log, the rules and eval runs.

Server-rendered pages (Starlette + Jinja2) with a little JavaScript; every asset
ships in the package, so it works offline and under a strict Content-Security-Policy.
``guard view`` serves it on loopback; ``guard serve`` mounts the same app under ``/ui``.
Nothing here is imported on the ``guard hook`` path.
"""

from __future__ import annotations

__all__ = ["ViewSources", "create_view"]

from guard.view.app import create_view
from guard.view.sources import ViewSources
