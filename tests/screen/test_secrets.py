"""fixbot.secrets: credentials found, redacted in place, and told apart from ordinary text.

Every fake credential here is assembled at run time from harmless pieces, so that this
file itself holds nothing a secret scanner would flag.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import FrozenInstanceError

import pytest

from fixbot.secrets import (
    SecretHit,
    added_secrets,
    find_secrets,
    is_placeholder,
    placeholder_credentials,
    redact,
)


def _pem(label: str, body_lines: int = 3) -> str:
    edge = "-" * 5
    body = "".join("MIIEow" + "IBAAKCAQEA3b1Xy9" * 4 + "\n" for _ in range(body_lines))
    return f"{edge}BEGIN {label}{edge}\n{body}{edge}END {label}{edge}"


RSA = "RSA " + "PRIVATE KEY"
TAIL = "Zx9_Yw8-Vu7Ts6Rq5" + "Po4Nm3Lk2Ji1Hg0Fe"
GITHUB = "ghp_" + "A1b2" * 9
OPENAI = "sk-" + "proj-" + TAIL * 3
AWS_ID = "AKIA" + "Q3EGQZ7K2TLB5XMN"
HUNTER = "hunter2" + "-Xq7"


# (id, the line(s) holding the secret, the exact secret text that must be replaced, kind)
CASES = [
    ("github", f"token = {GITHUB}", GITHUB, "GitHub Token"),
    ("github-oauth", "gho_" + "Z9y8" * 9, "gho_" + "Z9y8" * 9, "GitHub Token"),
    (
        "github-fine-grained",
        "GH_TOKEN=" + "github_pat_" + "11ABCDEFG0" + "abcdefghijk_" + "Z9y8X7w6" * 7,
        "github_pat_" + "11ABCDEFG0" + "abcdefghijk_" + "Z9y8X7w6" * 7,
        "GitHub Token",
    ),
    ("openai-project", f"OPENAI_API_KEY={OPENAI}", OPENAI, "OpenAI Token"),
    (
        "openai-legacy",
        "key: sk-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn" + "T3Blbk" + "FJ" + "Op7Qr8St9Uv0Wx1Yz2Ab",
        "sk-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn" + "T3Blbk" + "FJ" + "Op7Qr8St9Uv0Wx1Yz2Ab",
        "OpenAI Token",
    ),
    (
        "anthropic",
        "x-api-key: " + "sk-" + "ant-api03-" + TAIL * 2,
        "sk-" + "ant-api03-" + TAIL * 2,
        "Anthropic Token",
    ),
    ("aws-key-id", f"aws_access_key_id = {AWS_ID}", AWS_ID, "AWS Access Key"),
    (
        "aws-secret-unquoted",
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K" + "7MDENG/bPxRfiCY" + "Q3EGQZ7K2T",
        "wJalrXUtnFEMI/K" + "7MDENG/bPxRfiCY" + "Q3EGQZ7K2T",
        "AWS Access Key",
    ),
    (
        "bearer",
        'curl -H "Authorization: Bearer ' + "a1B2c3D4e5F6g7H8" + 'i9" https://api.example.com',
        "a1B2c3D4e5F6g7H8" + "i9",
        "Authorization Header",
    ),
    (
        "authorization-dict",
        'headers = {"Authorization": "token ' + ("0f1e2d" + "3c4b5a") * 2 + '"}',
        ("0f1e2d" + "3c4b5a") * 2,
        "Authorization Header",
    ),
    (
        "jwt",
        "cookie: session=" + "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0"
        "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c; Path=/",
        "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0"
        "." + "SflKxwRJSMeKKF2" + "QT4fwpMeJf36POk" + "6yJV_adQssw5c",
        "JSON Web Token",
    ),
    ("pem-block", _pem(RSA), _pem(RSA), "Private Key"),
    (
        "pem-openssh",
        _pem("OPENSSH " + "PRIVATE KEY"),
        _pem("OPENSSH " + "PRIVATE KEY"),
        "Private Key",
    ),
    (
        "pem-in-json",
        '{"private_key": "' + _pem("PRIVATE KEY").replace("\n", "\\n") + '\\n"}',
        _pem("PRIVATE KEY").replace("\n", "\\n"),
        "Private Key",
    ),
    (
        "pem-truncated",
        _pem(RSA).rsplit("\n", 2)[0] + "\n\n(output truncated)",
        _pem(RSA).rsplit("\n", 2)[0],
        "Private Key",
    ),
    ("password-python", f'password = "{HUNTER}"', HUNTER, "Secret Keyword"),
    ("password-yaml", f'db_password: "{HUNTER}"', HUNTER, "Secret Keyword"),
    ("password-json", f'  "client_secret": "{HUNTER}",', HUNTER, "Secret Keyword"),
    (
        "password-allowlist-pragma",
        f'PASSWORD = "{HUNTER}"  # pragma: ' + "allowlist secret",
        HUNTER,
        "Secret Keyword",
    ),
    (
        "url-credentials",
        "DATABASE_URL=postgres://app:" + "Xy7pQ2rT" + "@db.internal:5432/app",
        "Xy7pQ2rT",
        "Basic Auth Credentials",
    ),
    (
        "slack",
        "SLACK=" + "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "Slack Token",
    ),
    (
        "stripe",
        "stripe.api_key = " + "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "Stripe Access Key",
    ),
    (
        "gitlab",
        "GITLAB_TOKEN=" + "glpat-" + "xY9zAb3Cd4Ef5Gh6Ij7K",
        "glpat-" + "xY9zAb3Cd4Ef5Gh6Ij7K",
        "GitLab Token",
    ),
    (
        "sendgrid",
        "SENDGRID="
        + "SG."
        + "ngeVfQFYQlKU0ufo8x5d1A"
        + "."
        + "TwL2iGABf9DHoTf"
        + "-09kqeF8tAmbihY"
        + "zrnopKc-1s5cr",
        "SG."
        + "ngeVfQFYQlKU0ufo8x5d1A"
        + "."
        + "TwL2iGABf9DHoTf"
        + "-09kqeF8tAmbihY"
        + "zrnopKc-1s5cr",
        "SendGrid API Key",
    ),
    (
        "npm",
        "//registry.npmjs.org/:" + "_authToken=" + "npm_" + "A1b2C3d4E5f6G7h8I9j0" * 2,
        "npm_" + "A1b2C3d4E5f6G7h8I9j0" * 2,
        "NPM tokens",
    ),
    (
        "pypi",
        "password = " + "pypi-" + "AgEIcHlwaS5vcmc" + "CJDY2NzQ0NjE2LWQ3OGEtNDU3ZS1h" * 3,
        "pypi-" + "AgEIcHlwaS5vcmc" + "CJDY2NzQ0NjE2LWQ3OGEtNDU3ZS1h" * 3,
        "PyPI Token",
    ),
    (
        "twilio",
        "TWILIO_SID=" + "AC" + "1a8d4204" + "890840d7" + "fc482aab" + "38090d57",
        "AC" + "1a8d4204" + "890840d7" + "fc482aab" + "38090d57",
        "Twilio API Key",
    ),
    (
        "telegram",
        "bot " + "1234567890" + ":" + "AAH3kXz9Qw7e" + "8r4T5y6U7i8O" + "9p0A1s2D3f4",
        "1234567890" + ":" + "AAH3kXz9Qw7e" + "8r4T5y6U7i8O" + "9p0A1s2D3f4",
        "Telegram Bot Token",
    ),
    (
        "discord",
        "DISCORD="
        + "MTk4NjIyNDgzNDcxOTI1MjQ4"
        + "."
        + "Cl2FMQ"
        + "."
        + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "MTk4NjIyNDgzNDcxOTI1MjQ4" + "." + "Cl2FMQ" + "." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "Discord Bot Token",
    ),
    (
        "mailchimp",
        "MAILCHIMP=" + "0123456789abcdef" * 2 + "-us12",
        "0123456789abcdef" * 2 + "-us12",
        "Mailchimp Access Key",
    ),
    (
        "square",
        "square: " + "sq0csp-" + "ABCDEFGHIJ_klmn" + "opqrstu-vwxyz01" + "23456789ABCDE",
        "sq0csp-" + "ABCDEFGHIJ_klmn" + "opqrstu-vwxyz01" + "23456789ABCDE",
        "Square OAuth Secret",
    ),
    (
        "azure-storage",
        "DefaultEndpointsProtocol=https;AccountName=x;"
        + "AccountKey="
        + "lJzRc1YdHaAA2KC"
        + "NJJ1tkYwF/+mKK6"
        + "Ygw0NGe170Xu592"
        + "euJv2wYUtBlV8z"
        + "+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
        "AccountKey="
        + "lJzRc1YdHaAA2KC"
        + "NJJ1tkYwF/+mKK6"
        + "Ygw0NGe170Xu592"
        + "euJv2wYUtBlV8z"
        + "+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
        "Azure Storage Account access key",
    ),
]

BEFORE = "import os\n"
AFTER = "\nprint('done')\n"


@pytest.mark.parametrize(
    ("holder", "secret", "kind"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_kind_is_found_on_its_line_and_only_its_value_is_redacted(
    holder: str, secret: str, kind: str
) -> None:
    text = BEFORE + holder + AFTER

    assert find_secrets(text) == [SecretHit(kind, 2)]
    assert redact(text) == text.replace(secret, f"[redacted:{kind}]")


def test_hits_are_reported_in_order_with_their_lines() -> None:
    text = f'a = 1\npassword = "{HUNTER}"\n\nkey = {AWS_ID}  # and {GITHUB}\n'

    assert find_secrets(text) == [
        SecretHit("Secret Keyword", 2),
        SecretHit("AWS Access Key", 4),
        SecretHit("GitHub Token", 4),
    ]


def test_line_numbers_hold_for_crlf_and_for_text_whose_lower_case_is_longer() -> None:
    text = f'İstanbul İzmir\r\nx = 1\r\npassword = "{HUNTER}"\r\ntoken = {GITHUB}\r\n'

    assert find_secrets(text) == [SecretHit("Secret Keyword", 3), SecretHit("GitHub Token", 4)]
    assert redact(text) == text.replace(HUNTER, "[redacted:Secret Keyword]").replace(
        GITHUB, "[redacted:GitHub Token]"
    )


def test_secret_hit_is_a_frozen_value() -> None:
    hit = SecretHit("GitHub Token", 3)
    with pytest.raises(FrozenInstanceError):
        hit.line = 4  # type: ignore[misc]


def test_a_placeholder_in_a_known_format_is_not_a_secret() -> None:
    assert find_secrets("SID=" + "AC" + "x" * 32) == []


# --- what must not be flagged -------------------------------------------------------------

PEM_HEADER = "-" * 5 + "BEGIN " + RSA + "-" * 5
SHA256 = hashlib.sha256(b"fixbot").hexdigest()
SHA1 = hashlib.sha1(b"fixbot").hexdigest()
SHA512_B64 = base64.b64encode(hashlib.sha512(b"fixbot").digest()).decode()
LAST_USED = "2016-09-08T21:47:36Z"
STORED_ARN = "arn:aws:secretsmanager:us-west-2:123456789012:" + "secret:db-AbCd1e"
NOT_NEEDED = "not-needed"
DB_CREDENTIALS = "db-credentials"
UUID = str(uuid.UUID(int=0x1234_5678_9ABC_4DEF_8123_4567_89AB_CDEF))

PYTHON_SOURCE = f'''\
import os
from getpass import getpass

PLACEHOLDER_API_KEY = "{NOT_NEEDED}"
SECRET_NAME = "{DB_CREDENTIALS}"
TOKEN_ENV = "GITHUB_TOKEN"
PASSWORD_FILE = "/run/secrets/db_password"


def connect(user: str, password: str | None = None, token: str | None = None) -> None:
    password = password or get_password()
    api_key = os.environ["OPENAI_API_KEY"]
    secret = settings.SECRET_KEY
    headers = {{"Authorization": f"Bearer {{token}}"}}
    url = f"https://{{user}}:{{password}}@{{host}}/db"
    if pem.startswith("{PEM_HEADER}"):
        raise ValueError("Enter your password: %s" % user)
    key_id = "{UUID}"
    return hashlib.sha256(password.encode()).hexdigest() == "{SHA256}"


def task_runner_scheduling_configuration_for_desk_layout() -> str:
    return "task-runner-scheduling-configuration-for-desk-layout"
'''

PYTEST_OUTPUT = f"""\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/runner/work/app/app
configfile: pyproject.toml
collected 12 items

tests/test_auth.py::test_password_reset_sends_email PASSED               [  8%]
tests/test_auth.py::test_token_refresh FAILED                            [ 16%]
tests/test_auth.py::test_secret_rotation[aws-key] PASSED                 [ 25%]

=================================== FAILURES ===================================
______________________________ test_token_refresh ______________________________

client = <starlette.testclient.TestClient object at 0x7f3a2c1b9e40>

    def test_token_refresh(client):
        token = client.post("/token", data={{"password": password}}).json()
>       assert token["expires_in"] == 3600
E       AssertionError: assert 1800 == 3600
E        +  where 1800 = <built-in method get of dict object at 0x7f3a2c1b9e40>

tests/test_auth.py:42: AssertionError
----------------------------- Captured log call ------------------------------
INFO     app.auth:auth.py:88 issued token id={UUID} sha256={SHA256}
=========================== short test summary info ============================
FAILED tests/test_auth.py::test_token_refresh - AssertionError: assert 1800 == 3600
========================= 1 failed, 11 passed in 0.42s =========================
"""

UNIFIED_DIFF = f"""\
diff --git a/app/auth.py b/app/auth.py
index {SHA1[:7]}..{SHA1[-7:]} 100644
--- a/app/auth.py
+++ b/app/auth.py
@@ -10,7 +10,9 @@ def check_password(candidate: str) -> bool:
-    return candidate == stored_password
+    secret = load_secret(path=SECRET_PATH)
+    return hmac.compare_digest(hash_password(candidate, secret), stored_hash)
 def rotate_api_key(api_key: str) -> str:
"""

JSON_DOCUMENT = f"""\
{{
  "commit": "{SHA1}",
  "sha256": "{SHA256}",
  "id": "{UUID}",
  "image": "ghcr.io/acme/app@sha256:{SHA256}",
  "integrity": "sha512-{SHA512_B64}",
  "etag": "\\"{SHA256[:32]}\\"",
  "requirements": "requests==2.32.3 --hash=sha256:{SHA256}",
  "password_min_length": 12,
  "PasswordLastUsed": "{LAST_USED}",
  "SecretArn": "{STORED_ARN}",
  "token_url": "https://auth.example.com/oauth/token",
  "tags": ["secret-scanning", "api-keys"]
}}
"""


TRUE, WARN, SK_DOTS, YOUR_KEY, CHANGEME = "true", "warn", "sk-...", "your-api-key", "changeme"
AWS_DOC_KEY_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
GITHUB_PLACEHOLDER = "ghp_" + "x" * 36

CONFIG_AND_DOCS = f"""\
# Set OPENAI_API_KEY="{SK_DOTS}" and GITHUB_TOKEN="{GITHUB_PLACEHOLDER}" first.
aws_access_key_id = {AWS_DOC_KEY_ID}
password_enabled = "{TRUE}"
api_key = "{YOUR_KEY}"
password = "{CHANGEME}"
if settings.secrets_dir_missing == "{WARN}":
DATABASE_URL=postgres://user:{{password}}@localhost/db
"""


@pytest.mark.parametrize(
    "text",
    [PYTHON_SOURCE, PYTEST_OUTPUT, UNIFIED_DIFF, JSON_DOCUMENT, CONFIG_AND_DOCS],
    ids=["python", "pytest-output", "diff", "json", "config-and-docs"],
)
def test_ordinary_text_is_not_flagged_and_survives_redaction_byte_for_byte(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


def test_this_test_file_and_the_module_hold_no_secret() -> None:
    paths = [sys.modules[__name__].__file__, sys.modules["fixbot.secrets"].__file__]
    for path in paths:
        assert path
        with open(path, encoding="utf-8") as source:
            assert find_secrets(source.read()) == [], path
    # detect-secrets' own defaults, high-entropy plugins included, agree
    scan = subprocess.run(
        [sys.executable, "-m", "detect_secrets", "scan", *paths],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(scan.stdout)["results"] == {}


# --- known values, idempotence ------------------------------------------------------------


def test_known_values_are_redacted_everywhere_even_when_not_detectable() -> None:
    text = "login as deploy with tok3n-Value; retry with tok3n-Value\nabc is too short\n"

    assert redact(text, known=["tok3n-Value", "abc", ""]) == (
        "login as deploy with [redacted:known]; retry with [redacted:known]\nabc is too short\n"
    )


def test_a_known_value_overlapping_a_detected_secret_leaves_one_marker() -> None:
    text = f"export GH={GITHUB}\n"

    assert redact(text, known=[GITHUB[10:30]]) == "export GH=[redacted:GitHub Token]\n"


def test_known_values_never_eat_into_markers() -> None:
    text = f"token = {GITHUB}\n"

    redacted = redact(text, known=["redacted", "GitHub Token", "[redacted:"])

    assert redacted == "token = [redacted:GitHub Token]\n"


def test_redaction_repeats_until_nothing_more_is_exposed() -> None:
    # The key id is only a token once the known prefix glued to it is gone.
    text = f"id=Q7r9k2Lm{AWS_ID}\n"

    assert redact(text, known=["Q7r9k2Lm"]) == "id=[redacted:known][redacted:AWS Access Key]\n"


@pytest.mark.parametrize(
    "placeholder", ["local", "none", "x", "EMPTY", "sk-no-key-required", "ollama", "xxxxxxxxxx"]
)
def test_a_placeholder_key_is_not_a_secret_and_damages_nothing(placeholder: str) -> None:
    """A local server's key (`OPENAI_API_KEY=local`) is no secret: redacting it everywhere the
    word occurs would show the model `fixbot-local` as `fixbot-[redacted:known]`."""
    text = f"model fixbot-local at http://127.0.0.1:8011 (key {placeholder}); none failed\n"
    assert is_placeholder(placeholder)
    assert redact(text, known=[placeholder]) == text


@pytest.mark.parametrize("key", ["sk-test-SECRET-7f3a9c1d", "tok3n-Value", "hunter2hunter2"])
def test_a_real_key_stays_redacted_everywhere(key: str) -> None:
    text = f"key={key}; again {key}\n"
    assert not is_placeholder(key)
    assert redact(text, known=[key]) == "key=[redacted:known]; again [redacted:known]\n"


def test_the_placeholder_credentials_are_named() -> None:
    names = ("OPENAI_API_KEY", "GITHUB_TOKEN", "OTHER")
    env = dict(zip(names, ("local", GITHUB, "x"), strict=True))
    assert placeholder_credentials(env) == ["OPENAI_API_KEY"]


ALL_CASES = "\n".join(c[1] for c in CASES)


@pytest.mark.parametrize(
    "text", [ALL_CASES, *(c[1] for c in CASES)], ids=["all", *(c[0] for c in CASES)]
)
def test_redact_is_idempotent_and_leaves_nothing_to_find(text: str) -> None:
    once = redact(text, known=["Xq7", "deploy-user"])

    assert redact(once, known=["Xq7", "deploy-user"]) == once
    assert redact(once) == once
    assert find_secrets(once) == []


def test_every_secret_in_a_mixed_text_is_found() -> None:
    hits = find_secrets(ALL_CASES)

    assert [hit.kind for hit in hits] == [c[3] for c in CASES]


# --- added_secrets ------------------------------------------------------------------------

OLD = f'import os\n\npassword = "{HUNTER}"\nKEY = "{AWS_ID}"\n\n\ndef main():\n    pass\n'


def test_added_secrets_ignores_secrets_that_were_already_there() -> None:
    new = OLD.replace("    pass\n", "    print('hello')\n    return 0\n")

    assert added_secrets(OLD, new) == []


def test_added_secrets_finds_new_ones_with_their_lines_in_new() -> None:
    new = OLD.replace("\n\ndef main():", f"\n\nTOKEN = '{GITHUB}'\ndef main():")

    assert added_secrets(OLD, new) == [SecretHit("GitHub Token", 7)]


def test_moved_or_edited_lines_with_old_secrets_are_not_new_secrets() -> None:
    moved = OLD.replace(f'KEY = "{AWS_ID}"\n', "") + f'KEY = "{AWS_ID}"  # rotated yearly\n'

    assert added_secrets(OLD, moved) == []


def test_a_second_copy_of_an_old_secret_is_added() -> None:
    new = OLD + f'BACKUP_KEY = "{AWS_ID}"\n'

    assert added_secrets(OLD, new) == [SecretHit("AWS Access Key", 9)]


def test_a_new_key_block_is_told_apart_from_an_old_one_with_the_same_header() -> None:
    old_key = _pem(RSA)
    new_key = _pem(RSA).replace("MIIEow", "MIIEpA")
    old = f"# deploy key\n{old_key}\n"
    new = f"# ci key\n{new_key}\n# deploy key\n{old_key}\n"

    assert added_secrets(old, new) == [SecretHit("Private Key", 2)]


def test_added_secrets_for_created_and_deleted_files() -> None:
    assert added_secrets(None, f"x = 1\ntoken = {GITHUB}\n") == [SecretHit("GitHub Token", 2)]
    assert added_secrets(OLD, None) == []
    assert added_secrets(None, None) == []


# --- scale, threads, process state --------------------------------------------------------


def test_two_megabytes_are_scanned_and_redacted() -> None:
    filler = (PYTHON_SOURCE + PYTEST_OUTPUT + UNIFIED_DIFF + JSON_DOCUMENT) * 600
    head, tail = filler[: len(filler) // 2], filler[len(filler) // 2 :]
    text = head + f"\nleaked: {GITHUB}\n" + tail
    assert len(text) > 2_000_000
    line = head.count("\n") + 2

    assert find_secrets(text) == [SecretHit("GitHub Token", line)]
    assert redact(text) == text.replace(GITHUB, "[redacted:GitHub Token]")


def test_concurrent_scans_agree() -> None:
    texts = [c[1] for c in CASES] * 4
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(find_secrets, texts))

    assert results == [find_secrets(text) for text in texts]


def test_scanning_verifies_nothing_over_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a secret was sent out for verification")

    monkeypatch.setattr(requests.Session, "request", refuse)
    holders = {case[0]: case[1] for case in CASES}

    assert len(find_secrets(holders["slack"] + "\n" + holders["stripe"])) == 2


def test_using_the_scanner_leaves_warnings_uncaptured() -> None:
    script = (
        "import warnings; shown = warnings.showwarning\n"
        "from fixbot.secrets import find_secrets; find_secrets('x = 1')\n"
        "assert warnings.showwarning is shown\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
