"""The error the artifact service adds (docs/integrations/adk.md, ADKA-5)::

AdkValidationError                          validation_error
 └── ArtifactTooLargeError                  adk_artifact_too_large
"""

from __future__ import annotations

from .errors import AdkValidationError

__all__ = ["ArtifactTooLargeError"]


class ArtifactTooLargeError(AdkValidationError):
    """An artifact whose stored JSON is over ``MAX_ARTIFACT_BYTES``; nothing was written.

    ``session_id`` is the artifact log's store id, ``filename`` the artifact's name,
    ``size`` its JSON's bytes and ``limit`` the most allowed.
    """

    code = "adk_artifact_too_large"

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        filename: str = "",
        size: int = 0,
        limit: int = 0,
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.filename = filename
        self.size = size
        self.limit = limit
