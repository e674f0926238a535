"""The host's package-index settings, carried into the prepare step (and only there).

A setup_command that works on this machine must work in the sandbox: behind a TLS-intercepting
proxy, with a private index or a local wheelhouse. So the prepare step gets what pip and uv are
configured with here, and nothing else of the host's:

- pip's configuration files, merged in pip's own order (global: $XDG_CONFIG_DIRS/pip/pip.conf
  and /etc/pip.conf; then the user's ~/.pip/pip.conf and ~/.config/pip/pip.conf unless
  PIP_CONFIG_FILE names a file; then PIP_CONFIG_FILE), into one file the sandbox's pip reads
  as its PIP_CONFIG_FILE (PIP_CONFIG_FILE=/dev/null stays that: no file at all);
- the PIP_* and UV_* variables, but those that would send the install or pip's own files
  elsewhere (PIP_USER, PIP_TARGET, PIP_PREFIX, PIP_CACHE_DIR, UV_CACHE_DIR, ...);
- the certificate variables (PIP_CERT, REQUESTS_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR,
  CURL_CA_BUNDLE) and the proxy variables (http_proxy, https_proxy, no_proxy, all_proxy);
- the local files and folders those settings name (`cert = ...`, `constraint = ...`,
  `find-links = /opt/wheels`, `file://` index URLs): a file is copied into the settings folder
  (readable by the sandbox's user, whatever its mode here) and the setting rewritten to point at
  the copy; a folder is mounted read-only at its own path. `~` is this host's home.

Credentials in these settings (a token in an index URL, a proxy's password) are the user's
choice and reach the prepare step, where the repository's setup code runs too; fixbot redacts
them from everything it shows (`secrets`).
"""

from __future__ import annotations

import configparser
import hashlib
import io
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

INDEX_DIR = "/fixbot-index"  # where the prepare step sees the settings folder
PIP_CONF = "pip.conf"
_NOT_CARRIED = frozenset(
    {
        "PIP_CONFIG_FILE",  # replaced by the merged file
        "PIP_USER",
        "PIP_TARGET",
        "PIP_PREFIX",
        "PIP_ROOT",
        "PIP_SRC",
        "PIP_CACHE_DIR",
        "PIP_LOG",
        "PIP_LOG_FILE",
        "PIP_REQUIRE_VIRTUALENV",
        "UV_CACHE_DIR",
        "UV_PYTHON",
        "UV_PYTHON_INSTALL_DIR",
        "UV_TOOL_DIR",
        "UV_TOOL_BIN_DIR",
        "UV_PROJECT_ENVIRONMENT",
        "UV_SYSTEM_PYTHON",
    }
)
_CERTIFICATES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE")
_PROXIES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
_SECRET_NAME = re.compile(r"TOKEN|PASSWORD|PASSWD|SECRET|CREDENTIAL|_AUTH|API_KEY", re.IGNORECASE)
_TOKEN_SEGMENT = re.compile(r"(?=[A-Za-z_\-]*[0-9])(?=[0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,}")
# Where a named folder is never mounted: the sandbox's own places.
_RESERVED = ("/proc", "/dev", "/sys", "/workspace", "/fixbot-env", "/fixbot-out", INDEX_DIR)
COPY_LIMIT = 64 * 1024 * 1024  # a named file larger than this is mounted, not copied


@dataclass(frozen=True)
class IndexSettings:
    env: Mapping[str, str] = field(default_factory=dict)  # for the prepare step, rewritten
    pip_conf: str = ""  # the merged pip configuration ("" when there is none)
    files: Mapping[str, str] = field(default_factory=dict)  # host file -> name in the folder
    folders: tuple[str, ...] = ()  # host folders the settings name, mounted at their own path
    secrets: tuple[str, ...] = ()  # values to redact from anything fixbot shows
    # Where this host keeps what fixbot builds from nothing of a repository's (the shared
    # environments: base.py): $XDG_CACHE_HOME/fixbot or ~/.cache/fixbot; "" for the latter.
    # Not a setting of the index: never in the digest.
    cache: str = ""

    def digest(self) -> str:
        """What the settings are, for the prepared environment's cache key (never stored in
        clear): the variables, the merged configuration, the named files' contents."""
        digest = hashlib.sha256()
        for key, value in sorted(self.env.items()):
            digest.update(f"{key}={value}\0".encode())
        digest.update(self.pip_conf.encode() + b"\0")
        for source, name in sorted(self.files.items()):
            digest.update(f"{name}\0".encode() + _file_digest(Path(source)).encode())
        for folder in self.folders:
            digest.update(f"{folder}\0".encode())
        return digest.hexdigest()

    def stage(self, folder: Path) -> list[tuple[Path, str]]:
        """Write the settings folder (mounted at INDEX_DIR); the read-only mounts it needs."""
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
        if self.pip_conf:
            (folder / PIP_CONF).write_text(self.pip_conf, encoding="utf-8")
        for source, name in self.files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.parent.chmod(0o755)
            shutil.copyfile(source, target)
        for path in folder.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        return [(folder, INDEX_DIR), *((Path(p), p) for p in self.folders)]


def index_settings(
    environ: Mapping[str, str], home: Path | None = None, etc: Path = Path("/etc")
) -> IndexSettings:
    """This host's package-index settings, as the prepare step gets them (`home` and `etc`
    where its files are looked up: the user's home, and /etc)."""
    home = home or Path(environ.get("HOME") or Path.home())
    local = _Localizer(home)
    env: dict[str, str] = {}
    for key, value in sorted(environ.items()):
        carried = key.startswith(("PIP_", "UV_")) and key not in _NOT_CARRIED
        if carried or key in _CERTIFICATES or key.lower() in _PROXIES:
            env[key] = local.rewrite(value)
    pip_conf = _merged_pip_config(pip_config_files(environ, home, etc), local)
    if environ.get("PIP_CONFIG_FILE") == os.devnull:
        env["PIP_CONFIG_FILE"] = os.devnull
    elif pip_conf:
        env["PIP_CONFIG_FILE"] = f"{INDEX_DIR}/{PIP_CONF}"
    secrets = set()
    for key, value in env.items():
        if _SECRET_NAME.search(key.removeprefix("PIP_").removeprefix("UV_")):
            secrets.add(value)
        secrets.update(_url_secrets(value))
    secrets.update(_url_secrets(pip_conf))
    cache = Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "fixbot"
    return IndexSettings(
        env=env,
        pip_conf=pip_conf,
        files=dict(local.files),
        folders=tuple(sorted(local.folders)),
        secrets=tuple(sorted(s for s in secrets if s)),
        cache=str(cache),
    )


def pip_config_files(
    environ: Mapping[str, str], home: Path, etc: Path = Path("/etc")
) -> list[Path]:
    """pip's configuration files in its load order (a later one overrides an earlier one)."""
    named = environ.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    dirs = (environ.get("XDG_CONFIG_DIRS") or str(etc / "xdg")).split(os.pathsep)
    found = [Path(d) / "pip" / PIP_CONF for d in dirs if d] + [etc / PIP_CONF]
    if not (named and Path(named).exists()):  # pip reads the user's files only then
        user_dir = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        found += [home / ".pip" / PIP_CONF, user_dir / "pip" / PIP_CONF]
    if named:
        found.append(Path(named))
    return [path for path in found if path.is_file()]


def _merged_pip_config(files: list[Path], local: _Localizer) -> str:
    merged = configparser.RawConfigParser()
    for path in files:
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue  # pip would fail on it too; the setup's own output will say so
        for section in parser.sections():
            if not merged.has_section(section):
                merged.add_section(section)
            for key, value in parser.items(section):
                merged.set(section, key, local.rewrite(value))
    if not merged.sections():
        return ""
    text = io.StringIO()
    merged.write(text)
    return text.getvalue()


class _Localizer:
    """Rewrites the local paths a setting names: files to their copies in the settings
    folder, `~` to this host's home; remembers what to copy and what to mount."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.files: dict[str, str] = {}
        self.folders: set[str] = set()

    def rewrite(self, value: str) -> str:
        return re.sub(r"\S+", lambda m: self._word(m.group()), value)

    def _word(self, word: str) -> str:
        url = word.startswith("file://")
        raw = unquote(urlsplit(word).path) if url else word
        if raw.startswith("~"):
            raw = str(self.home) + raw[1:]
        if not raw.startswith("/"):
            return word
        path = Path(raw)
        if path.is_file() and path.stat().st_size <= COPY_LIMIT:
            name = self.files.setdefault(str(path), f"files/{len(self.files)}/{path.name}")
            copied = f"{INDEX_DIR}/{name}"
            return f"file://{copied}" if url else copied
        if path.is_dir() and _mountable(path):
            self.folders.add(str(path))
        return f"file://{raw}" if url else raw


def _mountable(path: Path) -> bool:
    where = str(path.resolve())
    reserved = any(where == r or where.startswith(r + "/") for r in _RESERVED)
    return not reserved and where not in ("/", "/tmp")  # noqa: S108 - the sandbox's own /tmp


def _url_secrets(text: str) -> set[str]:
    """Credentials in the URLs of a setting: userinfo, query strings, token-like segments."""
    found: set[str] = set()
    for word in re.findall(r"[a-z][a-z0-9+.-]*://[^\s/]+\S*", text):
        if word.startswith("file:"):
            continue
        parts = urlsplit(word)
        if "@" in parts.netloc:
            userinfo = parts.netloc.rsplit("@", 1)[0]
            _, colon, password = userinfo.partition(":")
            found.update({userinfo, password} if colon else {userinfo})  # a token alone
        if parts.query:
            found.add(parts.query)
        found.update(_TOKEN_SEGMENT.findall(parts.path))
    return found


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"
