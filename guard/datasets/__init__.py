"""Labeled tool-call datasets: the case format, validation, and importers from published benchmarks.

Not on the ``guard hook`` path, so pydantic is fine here.
"""

from __future__ import annotations

from guard.datasets.case import LABELS, Case, iter_cases, load_cases, write_cases
from guard.datasets.check import CheckReport, FileSummary, Finding, check_datasets
from guard.datasets.importers import IMPORT_FORMATS, ImportReport, import_path

__all__ = [
    "IMPORT_FORMATS",
    "LABELS",
    "Case",
    "CheckReport",
    "FileSummary",
    "Finding",
    "ImportReport",
    "check_datasets",
    "import_path",
    "iter_cases",
    "load_cases",
    "write_cases",
]
