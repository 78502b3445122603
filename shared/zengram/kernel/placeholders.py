"""What a scrubbed credential leaves in a text: `[REDACTED:<kind>:<digest>]`. On its own, without the detectors, so
code that only recognises placeholders (the chat layer's memories, at a Lambda function's init) does not compile
every credential pattern (`zengram.kernel.credentials`) to do it."""

from __future__ import annotations

import re

DIGEST_CHARS = 12
# A placeholder, or the bare `[REDACTED]` earlier versions stored: never scrubbed again.
PLACEHOLDER = re.compile(rf"\[REDACTED(?::[a-z0-9-]+:[0-9a-f]{{{DIGEST_CHARS}}})?\]")
