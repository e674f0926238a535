"""Credentials in text that is about to leave the runner: find them, redact them.

    find_secrets    text -> SecretHit(kind, line) for every credential found
    redact          text -> the same text with each credential value replaced by
                    "[redacted:<kind>]", and every `known` value too
    added_secrets   old, new -> the hits in lines the change added, numbered in `new`

Two detectors feed one list of character spans:

* our own patterns, run over the whole text: PEM/PGP/PuTTY private key blocks (with a
  body, not the bare header), OpenAI and Anthropic keys (`sk-...`), GitHub tokens
  (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), signed JWTs, AWS key ids and
  `aws_secret_access_key` values, and `Authorization: Bearer|Token|Basic <credential>`;
* the detect-secrets plugins in `_PLUGINS`, run one line at a time and only on lines
  that `_candidate_lines` finds could match one of them (the library spends a tenth of
  a millisecond or more on each line; most lines cannot match).

detect-secrets plugins left off: the GitHub, OpenAI, private-key and JWT ones, which our
patterns replace (the private-key plugin fires on the header text alone, as in code that
parses PEM; the JWT one stops short of the signature, which redaction would leave
behind); and, to keep false positives low on source code and test logs, the
high-entropy plugins (they flag hashes and base64 blobs), the public-IP plugin (an
address is not a credential), and the vendor plugins whose patterns are loose or cover
generic `key = <value>` lines (Artifactory, Cloudant, IBM, SoftLayer). The keyword
plugin only sees quoted values (`password = "..."`, not `password = get_password()`),
and `_plausible_value` drops values that are short, names, paths, templates or
placeholders.

Inline `pragma: allowlist secret` comments are not honoured: the text being checked is
partly model-written, and must not be able to exempt itself. Secrets are never verified
against their services: nothing here touches the network.

detect-secrets keeps its configuration in process-wide state, so every use of it holds
`_SCANNER_LOCK`; nothing else in fixbot may use the library directly.
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["SecretHit", "added_secrets", "find_secrets", "redact"]


@dataclass(frozen=True)
class SecretHit:
    kind: str
    """What was found, e.g. "GitHub Token", "Private Key", "OpenAI Token"."""
    line: int
    """1-based line in the scanned text where the secret starts."""


@dataclass(frozen=True)
class _Span:
    kind: str
    start: int
    end: int


KNOWN_KIND = "known"
"""The kind shown for `known` values passed to `redact`."""
MIN_KNOWN_LENGTH = 8
"""A `known` value shorter than this is a placeholder (`local`, `x`, `1234`): never redacted."""
PLACEHOLDER_WORDS = frozenset(
    {
        "local", "none", "null", "nil", "empty", "dummy", "test", "testing", "secret",
        "password", "changeme", "change-me", "fake", "token", "key", "apikey", "api-key",
        "api_key", "ollama", "lm-studio", "lmstudio", "llama", "vllm", "sk-no-key-required",
        "no-key", "nokey", "not-needed", "notneeded", "unused", "anything", "placeholder",
    }
)  # fmt: skip
"""Values a local model server's key is set to by convention (any key works there)."""

_MARKER = re.compile(r"\[redacted:[^\]\n]*\]")


def _marker(kind: str) -> str:
    return f"[redacted:{kind}]"


_PLACEHOLDER = re.compile(
    r"example|placeholder|dummy|change_?me|your[_-]|xxxx|\.\.\.|\*\*\*", re.IGNORECASE
)
"""Documentation values (AWS's `...EXAMPLE` key id, `sk-...`, `your-token`), never random."""


# --- our own patterns --------------------------------------------------------------------


@dataclass(frozen=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]
    accept: Callable[[str], bool]
    """Decides on the value (the `value` group, or the whole match)."""
    token: bool = False
    """The match must not continue a word (checked here: a regex that starts with a
    look-behind is searched some fifty times slower than one that starts with a literal)."""


def _not_placeholder(value: str) -> bool:
    return not _PLACEHOLDER.search(value)


CREDENTIALS = ("OPENAI_API_KEY", "GITHUB_TOKEN", "FIXBOT_DATABASE_URL")
"""The environment variables that hold credentials: never logged, never sent to the model,
never in an output (the Action adds the token's auth header)."""


def placeholder_credentials(env: Mapping[str, str]) -> list[str]:
    """The credential variables set to a placeholder (is_placeholder): not redacted, and the
    evidence says so."""
    return [name for name in CREDENTIALS if env.get(name) and is_placeholder(env[name])]


def is_placeholder(value: str) -> bool:
    """A credential's value too short or too common to be a secret (a local server's `local`,
    `none`, `x`, `sk-no-key-required`): redacting it would damage every text it occurs in (the
    model's name `fixbot-local`) and hide nothing. Real keys are long and random."""
    text = value.strip()
    return (
        len(text) < MIN_KNOWN_LENGTH
        or text.lower() in PLACEHOLDER_WORDS
        or len(set(text)) == 1
        or not _not_placeholder(text)
    )


def _looks_random(value: str) -> bool:
    """Digits and letters, or many distinct characters: not a `ghp_xxxx...` placeholder."""
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return (mixed or len(set(value)) >= 16) and _not_placeholder(value)


def _mixed_case_random(value: str) -> bool:
    body = value.removeprefix("sk-")
    tests = (str.isdigit, str.isupper, str.islower)
    return all(any(test(c) for c in body) for test in tests) and _not_placeholder(value)


def _is_token_char(char: str) -> bool:
    return char.isalnum() or char in ("_", "-")


def _has_key_body(value: str) -> bool:
    return re.search(r"[A-Za-z0-9+/]{32}", value) is not None


_PEM_BODY_LINE = (
    r"(?:\r?\n|\\r?\\n)(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): [^\r\n\\]*)"
)

_PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "Private Key",
        re.compile(
            r"-----BEGIN (?P<label>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----"
            # to the matching END, or (a truncated block) over the lines that look like one
            r"(?:(?:(?!-----BEGIN )[\s\S])*?-----END (?P=label)-----"
            rf"|(?:{_PEM_BODY_LINE})*)"
        ),
        _has_key_body,
    ),
    _Pattern(
        "Private Key",
        re.compile(
            r"PuTTY-User-Key-File-\d: [^\r\n]*"
            r"(?:\r?\n(?:[A-Za-z-]+: [^\r\n]*|[A-Za-z0-9+/=]{16,}))*"
        ),
        lambda value: "Private-Lines:" in value,
    ),
    _Pattern(
        "Anthropic Token",
        re.compile(r"sk-ant-[A-Za-z0-9_-]{32,}"),
        _mixed_case_random,
        token=True,
    ),
    _Pattern(
        "OpenAI Token",
        re.compile(r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        _mixed_case_random,
        token=True,
    ),
    _Pattern(
        "GitHub Token",
        re.compile(
            r"g(?:h[pousr]_[A-Za-z0-9]{36,251}|ithub_pat_[A-Za-z0-9_]{22,251})(?![A-Za-z0-9_])"
        ),
        _looks_random,
        token=True,
    ),
    _Pattern(
        "JSON Web Token",
        re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"),
        _not_placeholder,
        token=True,
    ),
    _Pattern(
        "AWS Access Key",
        re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Z0-9])"),
        _not_placeholder,
        token=True,
    ),
    _Pattern(
        "AWS Access Key",
        re.compile(
            r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        _not_placeholder,
    ),
    _Pattern(
        "Authorization Header",
        re.compile(
            r"(?:[Aa]uthorization|AUTHORIZATION)[\"']?\s*[:=]\s*[\"']?(?i:bearer|token|basic)\s+"
            r"(?P<value>[A-Za-z0-9._~+/=-]{16,})"
        ),
        lambda value: any(c.isdigit() for c in value) and _not_placeholder(value),
    ),
)


def _pattern_spans(text: str) -> Iterator[_Span]:
    for pattern in _PATTERNS:
        group = "value" if "value" in pattern.regex.groupindex else 0
        for match in pattern.regex.finditer(text):
            if pattern.token and _is_token_char(text[match.start() - 1 : match.start()]):
                continue
            if pattern.accept(match.group(group)):
                yield _Span(pattern.kind, match.start(group), match.end(group))


# --- detect-secrets ----------------------------------------------------------------------

_PLUGINS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "DiscordBotTokenDetector",
    "GitLabTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
# Not listed, so never run: filters.common.is_ignored_due_to_verification_policies (it would
# send found secrets to their services) and filters.allowlist.is_line_allowlisted (see above).
_FILTERS = (
    "detect_secrets.filters.heuristic.is_sequential_string",
    "detect_secrets.filters.heuristic.is_potential_uuid",
    "detect_secrets.filters.heuristic.is_likely_id_string",
    "detect_secrets.filters.heuristic.is_templated_secret",
    "detect_secrets.filters.heuristic.is_prefixed_with_dollar_sign",
    "detect_secrets.filters.heuristic.is_indirect_reference",
    "detect_secrets.filters.heuristic.is_not_alphanumeric_string",
)
_SETTINGS: dict[str, Any] = {
    "plugins_used": [{"name": name} for name in _PLUGINS],
    "filters_used": [{"path": path} for path in _FILTERS],
}
_SCANNER_LOCK = threading.Lock()

# What a line must contain for one of `_PLUGINS` to match it (detect-secrets 1.5 patterns),
# leaving out what `_PATTERNS` already finds (AWS key ids).
_CANDIDATE_LITERALS = (
    "AccountKey=",  # Azure
    "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-",  # GitLab
    "glagent-", "gloas-", "GR1348941",  # GitLab
    "_authToken=",  # npm
    "pypi-AgE",  # PyPI
    "SG.",  # SendGrid
    "sq0csp-",  # Square
    "k_live_",  # Stripe
)  # fmt: skip
_CANDIDATE_FOLDED = ("xox", "hooks.slack.com")  # these patterns ignore case
# One regex each, starting with a literal where possible: an alternation of them all, or a
# leading character class, is searched many times slower.
_CANDIDATE_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        r"://[^\s/@]+:[^\s/@]+@",  # basic auth in URLs
        r"[\"'][0-9a-zA-Z/+]{40}[\"']",  # AWS secret keys
        r"\.[\w-]{6}\.[\w-]{27}",  # Discord
        r"-us\d",  # Mailchimp
        r":[\w-]{35}",  # Telegram
        r"AC[a-z0-9]{32}",  # Twilio
        r"SK[a-z0-9]{32}",  # Twilio
    )
)


def _import_scanner() -> tuple[Callable[[str], Iterable[Any]], Callable[[dict[str, Any]], Any]]:
    showwarning = warnings.showwarning
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    # Importing detect-secrets turns on logging.captureWarnings for the whole process.
    if warnings.showwarning is not showwarning:
        logging.captureWarnings(False)
    return scan_line, transient_settings


@cache
def _keyword_literals() -> tuple[str, ...]:
    """The lower-case words the keyword plugin looks for, `api_?key` spelled both ways."""
    _import_scanner()
    from detect_secrets.plugins.keyword import DENYLIST

    words = {
        spelling
        for word in DENYLIST
        for spelling in (word.replace("_?", "_"), word.replace("_?", ""))
    }
    return tuple(sorted(words))


_NAME_WORDS = re.compile(r"pass|pwd|secret|key|token|auth|cred", re.IGNORECASE)
_ASSIGNED_KINDS = ("Secret Keyword", "Basic Auth Credentials")
MIN_ASSIGNED_LENGTH = 6
"""Shorter quoted values (`"bar"`, `"true"`, `"ok"`) are fixtures and flags, not credentials."""


def _plausible_value(kind: str, value: str) -> bool:
    """False for placeholders, and for what `secret = "..."` and `://user:...@` hold in
    ordinary code and docs: short values, names, paths, resource names, dates, templates."""
    if _PLACEHOLDER.search(value) or (len(value) >= 16 and len(set(value)) < 6):
        return False
    if kind not in _ASSIGNED_KINDS:
        return True
    return not (
        len(value) < MIN_ASSIGNED_LENGTH
        or any(c.isspace() for c in value)
        or re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", value)  # an environment variable
        or re.fullmatch(r"[A-Za-z]+(?:[._-][A-Za-z]+)+", value)  # not-needed, settings.KEY
        or (value.isalpha() and _NAME_WORDS.search(value))  # AWSSecretKey
        or value.startswith(("/", "./", "../", "~/", "arn:"))  # paths, AWS resource names
        or re.match(r"\d{4}-\d\d-\d\d", value)  # a date, as in `PasswordLastUsed`
        or (re.match(r"[a-z][a-z0-9+.-]*://", value) and "@" not in value)
        or re.search(r"\{[^{}]*\}|%(?:\(\w+\))?[sdr]", value)
    )


@dataclass(frozen=True)
class _Lines:
    """Line numbers for offsets in one text."""

    text: str
    newlines: list[int]

    @classmethod
    def of(cls, text: str) -> _Lines:
        return cls(text, [m.start() for m in re.finditer("\n", text)])

    def index_at(self, offset: int) -> int:
        """0-based index of the line holding `offset`."""
        return bisect.bisect_left(self.newlines, offset)

    def start(self, index: int) -> int:
        return 0 if index == 0 else self.newlines[index - 1] + 1

    def end(self, index: int) -> int:
        return self.newlines[index] if index < len(self.newlines) else len(self.text)


def _find_all(haystack: str, needle: str) -> Iterator[int]:
    offset = haystack.find(needle)
    while offset != -1:
        yield offset
        offset = haystack.find(needle, offset + 1)


def _candidate_lines(lines: _Lines) -> list[int]:
    """Indexes of the lines that one of `_PLUGINS` could match; a superset of those."""
    text = lines.text
    found = {lines.index_at(o) for needle in _CANDIDATE_LITERALS for o in _find_all(text, needle)}
    found.update(lines.index_at(m.start()) for s in _CANDIDATE_SHAPES for m in s.finditer(text))
    folded = _Lines.of(text.lower())  # lower() may change lengths, never the line count
    for needle in (*_CANDIDATE_FOLDED, *_keyword_literals()):
        found.update(folded.index_at(o) for o in _find_all(folded.text, needle))
    return sorted(found)


_TOKEN_TAIL = re.compile(r"[_-][A-Za-z0-9_-]*")


def _token_spans(line: str, value: str, *, widen: bool) -> Iterator[tuple[int, int]]:
    """Where `value` stands in `line` as a whole token.

    detect-secrets reports values, not places; some of its patterns match inside longer
    runs of letters and digits, and some report only a prefix group (`ghp` of `ghp_...`),
    which `widen` stretches over the `_` or `-` and the rest of the token.
    """
    for start in _find_all(line, value):
        end = start + len(value)
        if widen and (tail := _TOKEN_TAIL.match(line, end)):
            end = tail.end()
        if not _is_token_char(line[start - 1 : start]) and not _is_token_char(line[end : end + 1]):
            yield start, end


def _scan(lines: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """(kind, value) for each distinct line, from detect-secrets."""
    scan_line, transient_settings = _import_scanner()
    found: dict[str, list[tuple[str, str]]] = {}
    with _SCANNER_LOCK, transient_settings(_SETTINGS):
        for line in lines:
            if line not in found:
                found[line] = [(h.type, h.secret_value) for h in scan_line(line) if h.secret_value]
    return found


def _scanner_spans(lines: _Lines) -> Iterator[_Span]:
    candidates = {i: lines.text[lines.start(i) : lines.end(i)] for i in _candidate_lines(lines)}
    if not candidates:
        return
    found = _scan(line.removesuffix("\r") for line in candidates.values())
    for index, line in candidates.items():
        for kind, value in found[line.removesuffix("\r")]:
            for start, end in _token_spans(line, value, widen=kind not in _ASSIGNED_KINDS):
                if _plausible_value(kind, line[start:end]):
                    yield _Span(kind, lines.start(index) + start, lines.start(index) + end)


# --- spans -> hits, redactions ----------------------------------------------------------


@dataclass(frozen=True)
class _Markers:
    """The "[redacted:...]" markers already in a text, in order."""

    spans: list[_Span]
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Markers:
        spans = [_Span("", m.start(), m.end()) for m in _MARKER.finditer(text)]
        return cls(spans, [s.start for s in spans])

    def covers(self, span: _Span) -> bool:
        """Whether every character of `span` lies inside a marker."""
        position = span.start
        while position < span.end:
            index = bisect.bisect_right(self.starts, position) - 1
            if index < 0 or self.spans[index].end <= position:
                return False
            position = self.spans[index].end
        return True

    def cut_by(self, span: _Span) -> list[_Span]:
        """The markers that `span` overlaps."""
        first = max(bisect.bisect_right(self.starts, span.start) - 1, 0)
        last = bisect.bisect_left(self.starts, span.end)
        return [m for m in self.spans[first:last] if m.end > span.start]


def _merge(spans: Iterable[_Span]) -> list[_Span]:
    """Overlapping spans become one, named after the longest of them."""
    merged: list[tuple[_Span, _Span]] = []  # (extent, longest member)
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start < merged[-1][0].end:
            extent, longest = merged[-1]
            if span.end - span.start > longest.end - longest.start:
                longest = span
            merged[-1] = (_Span(longest.kind, extent.start, max(extent.end, span.end)), longest)
        else:
            merged.append((span, span))
    return [_Span(longest.kind, extent.start, extent.end) for extent, longest in merged]


def _found_spans(text: str, lines: _Lines, markers: _Markers, known: Sequence[str]) -> list[_Span]:
    """Every secret and `known` value in `text`, unmerged, leaving out what is redacted."""
    found = [*_pattern_spans(text), *_scanner_spans(lines)]
    found += (_Span(KNOWN_KIND, o, o + len(v)) for v in known for o in _find_all(text, v))
    return [s for s in found if not markers.covers(s)]


def _secret_spans(text: str) -> tuple[list[_Span], _Lines]:
    lines = _Lines.of(text)
    return _merge(_found_spans(text, lines, _Markers.of(text), ())), lines


def _hit(span: _Span, lines: _Lines) -> SecretHit:
    return SecretHit(span.kind, lines.index_at(span.start) + 1)


def find_secrets(text: str) -> list[SecretHit]:
    """Every credential in `text`, in order; text already redacted here is not reported."""
    spans, lines = _secret_spans(text)
    return [_hit(span, lines) for span in spans]


def _redact_once(text: str, known: Sequence[str]) -> str:
    markers = _Markers.of(text)
    spans = _found_spans(text, _Lines.of(text), markers, known)
    # a span that cuts into a marker takes the whole marker with it
    spans += (marker for span in spans for marker in markers.cut_by(span))
    parts: list[str] = []
    position = 0
    for span in _merge(spans):
        parts += (text[position : span.start], _marker(span.kind))
        position = span.end
    return "".join(parts) + text[position:]


def redact(text: str, *, known: Iterable[str] = ()) -> str:
    """`text` with every secret value, and every `known` value that is not a placeholder
    (is_placeholder), replaced by "[redacted:<kind>]"; everything else is left exactly as it
    was.

    Repeats until nothing more is found (a redaction can expose a token boundary), so
    `redact(redact(t)) == redact(t)` and `find_secrets(redact(t)) == []`.
    """
    values = tuple(sorted({v for v in known if not is_placeholder(v)}))
    while (redacted := _redact_once(text, values)) != text:
        text = redacted
    return text


def _added_line_indexes(old: str, new: str) -> set[int]:
    """0-based indexes of the lines of `new` that `old` does not account for, as a multiset."""
    remaining = Counter(old.split("\n")) if old else Counter[str]()
    added = set()
    for index, line in enumerate(new.split("\n")):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            added.add(index)
    return added


def added_secrets(old: str | None, new: str | None) -> list[SecretHit]:
    """Secrets that the change from `old` to `new` brings in (None: no such file).

    A secret counts when a line it lies on was added, and `new` holds more secrets with
    that value than `old` did: a secret already there that moved, or sits on an edited
    line, is not reported.
    """
    if not new:
        return []
    old = old or ""
    spans, lines = _secret_spans(new)
    unaccounted = Counter(new[s.start : s.end] for s in spans)
    unaccounted.subtract(old[s.start : s.end] for s in _secret_spans(old)[0])
    added = _added_line_indexes(old, new)
    hits = []
    for span in spans:
        value = new[span.start : span.end]
        first, last = lines.index_at(span.start), lines.index_at(span.end - 1)
        if unaccounted[value] > 0 and not added.isdisjoint(range(first, last + 1)):
            unaccounted[value] -= 1
            hits.append(_hit(span, lines))
    return hits
