"""The language libpq and the tests' private servers speak: English, or German in the
run of ``test_postgres_language.py``, which sets :data:`LANGUAGE_ENV` for its child."""

from __future__ import annotations

import os

__all__ = ["GERMAN", "LANGUAGE_ENV", "says"]

LANGUAGE_ENV = "HELIX_TEST_PG_LANGUAGE"
GERMAN = os.environ.get(LANGUAGE_ENV) == "de"


def says(error: BaseException, english: str) -> None:
    """The error carries libpq's or the server's ``english`` reason, in the language spoken.

    In the German run the English text must be absent: proof that the message
    the store classified was translated.
    """
    if GERMAN:
        assert english not in str(error), f"not translated: {error}"
    else:
        assert english in str(error), str(error)
