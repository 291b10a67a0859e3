"""The evals page(s) of the view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from guard.view.app import ViewSources

__all__ = ["routes"]


def routes(sources: ViewSources, pages: Jinja2Templates) -> list[BaseRoute]:
    async def index(request: Request) -> Response:
        return pages.TemplateResponse(request, "evals.html", {"section": "evals"})

    return [Route("/evals", index, name="evals")]
