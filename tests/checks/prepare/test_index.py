"""The host's package-index settings as the prepare step gets them: real files in temporary
folders standing in for /etc and the user's home, read the way pip reads its own."""

from __future__ import annotations

import configparser
import os
from pathlib import Path

import pytest

from fixbot.checks import IndexSettings, index_settings
from fixbot.checks.prepare.index import INDEX_DIR, pip_config_files


@pytest.fixture
def host(tmp_path: Path) -> Path:
    for folder in ("etc/xdg/pip", "home/.config/pip", "home/.pip"):
        (tmp_path / folder).mkdir(parents=True)
    return tmp_path


def conf(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def merged(settings: IndexSettings) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser()
    parser.read_string(settings.pip_conf)
    return parser


def test_pip_files_merge_in_pips_own_order(host: Path) -> None:
    conf(host / "etc/xdg/pip/pip.conf", "[global]\nindex-url = https://xdg.invalid\ntimeout = 1\n")
    conf(host / "etc/pip.conf", "[global]\nindex-url = https://etc.invalid\n")
    conf(host / "home/.pip/pip.conf", "[install]\nno-compile = yes\n")
    conf(host / "home/.config/pip/pip.conf", "[global]\ntimeout = 9\n")
    settings = index_settings({}, home=host / "home", etc=host / "etc")
    parser = merged(settings)
    assert parser.get("global", "index-url") == "https://etc.invalid"  # /etc over /etc/xdg
    assert parser.get("global", "timeout") == "9"  # the user's over the global ones
    assert parser.get("install", "no-compile") == "yes"
    assert settings.env["PIP_CONFIG_FILE"] == f"{INDEX_DIR}/pip.conf"


def test_a_pip_config_file_variable_is_read_last_and_hides_the_users_files(host: Path) -> None:
    conf(host / "etc/pip.conf", "[global]\ntimeout = 1\nretries = 7\n")
    conf(host / "home/.config/pip/pip.conf", "[global]\nuser-only = yes\n")
    named = conf(host / "named.conf", "[global]\ntimeout = 5\n")
    environ = {"PIP_CONFIG_FILE": str(named)}
    files = pip_config_files(environ, host / "home", host / "etc")
    assert files == [host / "etc/pip.conf", named]  # pip reads no user file then
    parser = merged(index_settings(environ, home=host / "home", etc=host / "etc"))
    assert (parser.get("global", "timeout"), parser.get("global", "retries")) == ("5", "7")
    assert not parser.has_option("global", "user-only")


def test_pip_config_file_devnull_means_no_file_at_all(host: Path) -> None:
    conf(host / "etc/pip.conf", "[global]\ntimeout = 1\n")
    settings = index_settings({"PIP_CONFIG_FILE": os.devnull}, home=host / "home", etc=host / "etc")
    assert settings.pip_conf == ""
    assert settings.env["PIP_CONFIG_FILE"] == os.devnull


def test_named_files_are_copied_and_named_folders_mounted(host: Path) -> None:
    cert = conf(host / "corp-ca.pem", "-----BEGIN CERTIFICATE-----\n")
    cert.chmod(0o600)  # the sandbox's user could not read it where it is
    wheels = host / "wheels"
    wheels.mkdir()
    constraints = conf(host / "home" / "constraints.txt", "torch<=2\n")
    conf(
        host / "etc/pip.conf",
        f"[global]\ncert = {cert}\nconstraint = ~/constraints.txt\n"
        f"extra-index-url = file://{wheels} https://pypi.invalid/simple\n",
    )
    environ = {"PIP_CERT": str(cert), "PIP_FIND_LINKS": f"{wheels} https://x.invalid/links"}
    settings = index_settings(environ, home=host / "home", etc=host / "etc")
    copied = {source: f"{INDEX_DIR}/{name}" for source, name in settings.files.items()}
    assert set(copied) == {str(cert), str(constraints)}
    parser = merged(settings)
    assert parser.get("global", "cert") == copied[str(cert)]
    assert parser.get("global", "constraint") == copied[str(constraints)]  # ~ is this host's
    assert parser.get("global", "extra-index-url") == (
        f"file://{wheels} https://pypi.invalid/simple"
    )
    assert settings.env["PIP_CERT"] == copied[str(cert)]
    assert settings.env["PIP_FIND_LINKS"] == f"{wheels} https://x.invalid/links"
    assert settings.folders == (str(wheels),)
    staged = host / "staged"
    mounts = settings.stage(staged)
    assert mounts == [(staged, INDEX_DIR), (wheels, str(wheels))]
    copy = staged / settings.files[str(cert)]
    assert copy.read_text() == cert.read_text()
    assert copy.stat().st_mode & 0o777 == 0o644
    assert (staged / "pip.conf").read_text() == settings.pip_conf


def test_only_index_settings_are_carried(host: Path) -> None:
    environ = {
        "PIP_INDEX_URL": "https://pypi.invalid/simple",
        "PIP_DEFAULT_TIMEOUT": "60",
        "UV_INDEX_URL": "https://uv.invalid/simple",
        "REQUESTS_CA_BUNDLE": "/nonexistent/ca.pem",
        "https_proxy": "http://proxy.invalid:3128",
        "NO_PROXY": "localhost",
        # where the install would go, or pip's own files: never carried
        "PIP_USER": "1",
        "PIP_TARGET": "/elsewhere",
        "PIP_CACHE_DIR": "/root/.cache/pip",
        "UV_CACHE_DIR": "/root/.cache/uv",
        # the host's secrets and everything else: never carried
        "OPENAI_API_KEY": "sk-test-SECRET",
        "GITHUB_TOKEN": "ghp_x",
        "HOME": "/root",
        "PATH": "/usr/bin",
    }
    settings = index_settings(environ, home=host / "home", etc=host / "etc")
    assert settings.env == {
        "PIP_INDEX_URL": "https://pypi.invalid/simple",
        "PIP_DEFAULT_TIMEOUT": "60",
        "UV_INDEX_URL": "https://uv.invalid/simple",
        "REQUESTS_CA_BUNDLE": "/nonexistent/ca.pem",
        "https_proxy": "http://proxy.invalid:3128",
        "NO_PROXY": "localhost",
    }


def test_credentials_in_the_settings_are_known_secrets(host: Path) -> None:
    conf(host / "etc/pip.conf", "[global]\nextra-index-url = https://ci:hunter22@corp.invalid/s\n")
    environ = {
        "PIP_INDEX_URL": "https://pypi.corp.invalid/api/Ab3dEf6hIj9kLm2nOp5q/simple/",
        "UV_INDEX_PRIVATE_PASSWORD": "pa55word-xyz",
        "https_proxy": "http://me:pr0xy-pass@proxy.invalid:3128",
        "PIP_TRUSTED_HOST": "pypi.corp.invalid",
    }
    secrets = index_settings(environ, home=host / "home", etc=host / "etc").secrets
    for secret in ("Ab3dEf6hIj9kLm2nOp5q", "pa55word-xyz", "pr0xy-pass", "hunter22"):
        assert secret in secrets
    assert "me" not in secrets and "ci" not in secrets  # user names are not secrets
    assert "pypi.corp.invalid" not in secrets


def test_the_digest_follows_what_the_settings_say(host: Path) -> None:
    cert = conf(host / "ca.pem", "one\n")
    settings = index_settings({"PIP_CERT": str(cert)}, home=host / "home", etc=host / "etc")
    before = settings.digest()
    cert.write_text("two\n")  # the same variables, another certificate
    assert settings.digest() != before
    assert IndexSettings().digest() == IndexSettings().digest()
