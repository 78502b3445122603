"""The provider token formats: credentials whose shape alone marks them (`ghp_…`, `AKIA…`, `xoxb-…`), each a named
`Detector` (`zengram.kernel.credentials` runs them first, then the structures and labelled secrets). Formats follow
the providers' documentation, cross-checked against gitleaks' and detect-secrets' rules."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zengram.kernel.anchors import anchored
from zengram.kernel.secret_shapes import char_classes

Span = tuple[int, int, str]  # start, end, kind


@dataclass(frozen=True)
class Detector:
    name: str  # also the kind a placeholder names, unless the detector says otherwise per finding
    find: Callable[[str], Iterator[Span]]
    # A cheap test every text it finds something in passes (a literal its matches all hold): the scrubber
    # skips `find` on texts that fail it, so ordinary text costs a few literal searches, not every detector.
    # It must never be False where `find` would find something; None: always run `find`.
    hint: Callable[[str], object] | None = None


def _hint(regex: str, flags: int = 0) -> Callable[[str], object]:
    """A hint from a regex of the literals a detector's matches hold, compiled with the detector's own flags
    (so case-insensitive matching folds characters exactly as the detector's regex does)."""
    return re.compile(regex, flags).search


# -- building blocks --------------------------------------------------------------------------------------------

def _pattern(name: str, regex: str, *, flags: int = 0, accept: Callable[[str], bool] | None = None,
             anchors: tuple[str, ...] = (), lead: Sequence[int] = (0,)) -> Detector:
    """A detector from one regex: the `secret` group (or the whole match) is the span; `accept` filters.
    `anchors`: literals one of which every match starts with, or `lead` characters after its start (the regex is
    then tried only there)."""
    compiled = re.compile(regex, flags)
    group = "secret" if "secret" in compiled.groupindex else 0
    finditer = anchored(compiled, *anchors, lead=lead) if anchors else compiled.finditer

    def find(text: str) -> Iterator[Span]:
        for match in finditer(text):
            start, end = match.span(group)
            if start < end and (accept is None or accept(match.group(group))):
                yield start, end, name

    return Detector(name, find)


def _has_digit_and_letter(value: str) -> bool:
    digit, lower, upper, _ = char_classes(value)
    return digit and (lower or upper)


def _random_looking(value: str) -> bool:
    digit, lower, upper, _ = char_classes(value)
    return digit or (lower and upper)


def _basic_credentials(value: str) -> bool:
    """`Basic` credentials are base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _bearer_token(value: str) -> bool:
    digit, lower, upper, other = char_classes(value)
    return (len(value) >= 6 and digit and (lower or upper)) or (len(value) >= 16 and (digit or other or
                                                                                       (lower and upper)))


_BEFORE = r"(?<![A-Za-z0-9_])"  # a token starts here
_AFTER = r"(?![A-Za-z0-9_])"

# -- provider token formats -------------------------------------------------------------------------------------

PROVIDER_TOKENS = [
    _pattern("aws-access-key-id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
             anchors=("AKIA", "ASIA", "ABIA", "ACCA")),
    # The secret half of an AWS key pair: 40 base64 characters, only recognisable by its label (env, ini, JSON,
    # CLI, camelCase) or by standing right after an access key id (credentials CSV, "id / secret" notes).
    _pattern("aws-secret-access-key",
             r"(?<![A-Za-z0-9])(?:aws[_.-]?)?secret[_.-]?(?:access[_.-]?)?key[\"']?[ \t]*(?:=>|:=|[:=]|[ \t])[ \t]*"
             r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", flags=re.IGNORECASE,
             anchors=("awssecret", "aws_secret", "aws.secret", "aws-secret", "secret")),
    _pattern("aws-secret-access-key",
             r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])[^\n]{0,100}?(?<![A-Za-z0-9/+])"
             r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
             accept=lambda value: all(char_classes(value)[:3]) or (_random_looking(value) and "/" in value),
             anchors=("AKIA", "ASIA")),
    _pattern("anthropic-api-key", _BEFORE + r"sk-ant-[A-Za-z0-9_-]{32,}", accept=_has_digit_and_letter,
             anchors=("sk-ant-",)),
    _pattern("openai-api-key",
             r"(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})(?![A-Za-z0-9_-])",
             accept=_has_digit_and_letter, anchors=("sk-",)),
    _pattern("github-token", _BEFORE + r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,})" + _AFTER,
             anchors=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _pattern("gitlab-token",
             r"(?<![A-Za-z0-9_-])gl(?:pat|dt|ptt|rt|soat|ft|cbt|imt|oas)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
             accept=_random_looking,
             anchors=tuple(f"gl{kind}-" for kind in ("pat", "dt", "ptt", "rt", "soat", "ft", "cbt", "imt", "oas"))),
    _pattern("slack-token", r"(?<![A-Za-z0-9])(?:xox(?:e\.xox)?[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})",
             accept=lambda value: any(c.isdigit() for c in value[5:]), anchors=("xox", "xapp-")),
    _pattern("slack-webhook",
             r"(?i)https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})",
             accept=_random_looking, anchors=("http://hooks.", "https://hooks.")),
    _pattern("discord-webhook",
             r"(?i)https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,}/(?P<secret>[A-Za-z0-9_-]{30,})",
             anchors=tuple(f"{scheme}://{host}" for scheme in ("http", "https")
                           for host in ("discord", "ptb.", "canary."))),
    _pattern("zengram-api-key", _BEFORE + r"zgk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}" + _AFTER,  # our own scoped keys
             anchors=("zgk_",)),
    _pattern("npm-token", _BEFORE + r"npm_[A-Za-z0-9]{36}" + _AFTER, accept=_random_looking, anchors=("npm_",)),
    _pattern("pypi-token", _BEFORE + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", anchors=("pypi-",)),
    _pattern("huggingface-token", _BEFORE + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}" + _AFTER, accept=_random_looking,
             anchors=("hf_", "api_org_")),
    _pattern("stripe-key", _BEFORE + r"(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})" + _AFTER,
             accept=_has_digit_and_letter, anchors=("sk_", "rk_", "whsec_")),
    _pattern("google-api-key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", anchors=("AIza",)),
    _pattern("google-oauth-secret",
             r"(?<![A-Za-z0-9_-])(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,})",
             accept=_has_digit_and_letter, anchors=("GOCSPX-", "ya29.", "1//0")),
    _pattern("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
             anchors=("eyJ",)),
    _pattern("twilio-api-key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", accept=_has_digit_and_letter,
             anchors=("SK",)),
    _pattern("sendgrid-api-key", _BEFORE + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _AFTER, anchors=("SG.",)),
    _pattern("mailgun-api-key", r"(?<![A-Za-z0-9])key-[0-9a-f]{32}(?![A-Za-z0-9])", accept=_has_digit_and_letter,
             anchors=("key-",)),
    _pattern("mailchimp-api-key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])", anchors=("-us",),
             lead=(32,)),
    _pattern("discord-bot-token",  # user id (base64 of digits), timestamp, HMAC
             r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])",
             accept=_has_digit_and_letter),
    _pattern("telegram-bot-token", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])", anchors=(":AA",),
             lead=range(8, 11)),
    _pattern("llm-provider-key",  # Groq, xAI, Replicate, Perplexity
             _BEFORE + r"(?:gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{60,}|r8_[A-Za-z0-9]{37}|pplx-[A-Za-z0-9]{40,})"
             + _AFTER,
             accept=_random_looking, anchors=("gsk_", "xai-", "r8_", "pplx-")),
    _pattern("service-token",  # DigitalOcean, Shopify, Databricks, Atlassian, Linear, Square, Heroku, New Relic,
             # Sentry, HashiCorp Vault, Doppler, age
             r"(?<![A-Za-z0-9_.-])(?:do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}"
             r"|ATATT3[A-Za-z0-9_=-]{50,}|lin_api_[A-Za-z0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"
             r"|HRKU-[A-Za-z0-9_-]{30,}|NRAK-[A-Z0-9]{27}|sntry[su]_[A-Za-z0-9+/=_]{40,}|hv[sb]\.[A-Za-z0-9_-]{24,}"
             r"|dp\.(?:pt|st|ct|sa)\.[A-Za-z0-9]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{58})(?![A-Za-z0-9_-])",
             accept=_has_digit_and_letter,
             anchors=("dop_v1_", "dor_v1_", "doo_v1_", "shpat_", "shpca_", "shppa_", "shpss_", "dapi", "ATATT3",
                      "lin_api_", "sq0atp-", "sq0csp-", "HRKU-", "NRAK-", "sntrys_", "sntryu_", "hvs.", "hvb.",
                      "dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "AGE-SECRET-KEY-1")),
]
