"""Name a mistyped config key's likely intent: ``failur_mode`` → "did you mean 'failure_mode'?"."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["error_message"]


def _keys_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the (nested) model that holds ``loc``; empty when it is not a model."""
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def error_message(error: Any, model: type[BaseModel]) -> str:
    """Pydantic's message for one error of ``model``, an unknown key replaced by the key it resembles."""
    if error["type"] != "extra_forbidden":
        return str(error["msg"]).removeprefix("Value error, ")  # a validator's own words, without pydantic's label
    import difflib  # only on this error path

    keys = _keys_at(model, tuple(error["loc"][:-1]))
    close = difflib.get_close_matches(str(error["loc"][-1]), keys, n=1, cutoff=0.6)
    if close:
        return f"unknown key (did you mean {close[0]!r}?)"
    return f"unknown key (expected one of: {', '.join(keys)})" if keys else "unknown key"
