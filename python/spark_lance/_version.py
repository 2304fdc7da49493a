"""The package version, defined once in the repository's VERSION file.

Nothing here types it: an installed package reads ``spark_lance/VERSION``, which ``setup.py``
writes into the build from the repository's ``VERSION``; a source checkout (``python/`` on
``sys.path``) reads the repository's ``VERSION`` itself.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: Written by setup.py into the built package (never present in the source tree).
BUILT_VERSION_FILE = PACKAGE_DIR / "VERSION"
#: The repository's VERSION, when this module is imported from a source checkout.
CHECKOUT_VERSION_FILE = PACKAGE_DIR.parent.parent / "VERSION"

DISTRIBUTION = "spark-lance"


def read_version() -> str:
    for f in (BUILT_VERSION_FILE, CHECKOUT_VERSION_FILE):
        if f.is_file():
            text = f.read_text().strip()
            if text:
                return text
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = read_version()
