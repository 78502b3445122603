"""Token counts as the layer reports and budgets them: an estimate, not a tokenizer (no model-specific files).

About four characters per token holds for English under the GPT and Llama tokenizers; each message costs a few
tokens of framing on top. Recall events say "estimated" wherever they report these.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def message_tokens(content: str) -> int:
    return estimate_tokens(content) + MESSAGE_OVERHEAD
