"""git on the host over an untrusted repository: no secret, no system or global config, no hook,
no filter, no LFS, no attribute that rewrites content.

fixbot's own git commands run outside the sandbox, over a commit (and, in CI, a `.git/config`:
an earlier step may have run the repository's code) that is untrusted. Two tiers:

- **object reads** (exporting the commit): never in the repository itself, but in a private
  *shadow* GIT_DIR that borrows its objects through `objects/info/alternates`. The repository's
  config, hooks, info/attributes, replace refs and grafts are simply not there, and the shadow's
  own `info/attributes` (the highest-precedence attributes file) unsets every attribute that
  rewrites content, so the files are the commit's blobs byte for byte. A partial clone's missing
  object fails instead of being fetched.
- **repository reads** that need the repository (its top folder, HEAD, whether the tree is
  clean, the origin URL): in it, with every way its config has of running a program switched
  off on the command line, which outranks it (SAFE_CONFIG, and each filter driver it defines).

Both run with `environment()` only (never fixbot's: no model key, no token, no GIT_* variable
of the caller), a private empty HOME, and no /etc/gitconfig (where git-lfs registers its
filter) or ~/.gitconfig.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from fixbot import proc
from fixbot.proc import Completed

# Every attribute that makes a checkout differ from the committed blobs.
NEUTRAL_ATTRIBUTES = (
    "* -text !eol -filter -ident -working-tree-encoding -export-subst -export-ignore -diff\n"
)
# For every host-side git command over an untrusted repository (transports included).
NO_PROGRAMS: tuple[str, ...] = (
    "core.fsmonitor=false",  # else a program named by the config runs on every index refresh
    "core.hooksPath=/dev/null",  # no hook (post-index-change runs even for `git status`)
    "core.attributesFile=/dev/null",
    "diff.external=",
    "submodule.recurse=false",
    "filter.lfs.smudge=",  # in case the repository ran `git lfs install --local`
    "filter.lfs.clean=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
)
SAFE_CONFIG: tuple[str, ...] = (
    *NO_PROGRAMS,
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",  # an empty value clears the helper list
    "protocol.allow=never",  # no transport at all: no lazy fetch, no submodule fetch
    # The checkout may belong to another user (the Action's, fixbot as root): every program
    # its config could name is off, so its ownership does not matter.
    "safe.directory=*",
)
_FULL_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")
_FILTER_KEY = re.compile(r"filter\.(.+)\.(clean|smudge|process|required)\Z", re.DOTALL)
_TIMEOUT = 300.0


def environment(home: Path) -> dict[str, str]:
    """The whole environment of a host-side git command."""
    git = shutil.which("git") or "/usr/bin/git"
    return {
        "PATH": ":".join(
            dict.fromkeys([str(Path(git).parent), "/usr/local/bin", "/usr/bin", "/bin"])
        ),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_LFS_SKIP_SMUDGE": "1",
        "GIT_OPTIONAL_LOCKS": "0",  # `git status` does not write the index back
        "GIT_NO_REPLACE_OBJECTS": "1",  # refs/replace/ cannot substitute another commit
        "GIT_PAGER": "cat",
        "PAGER": "cat",
    }


def config_args(pairs: Sequence[str]) -> list[str]:
    return [arg for pair in pairs for arg in ("-c", pair)]


def neutralised(config_names: Sequence[str]) -> list[str]:
    """Config pairs that make every filter driver among these config keys a no-op (an empty
    command is no filter)."""
    drivers = dict.fromkeys(m.group(1) for k in config_names if (m := _FILTER_KEY.match(k)))
    pairs = []
    for name in drivers:
        pairs += [f"filter.{name}.{key}=" for key in ("clean", "smudge", "process")]
        pairs.append(f"filter.{name}.required=false")
    return pairs


class HostGit:
    """fixbot's git on the host, for one task; close() removes its private HOME."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="fixbot-git-home-"))
        self.env = environment(self.home)

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> HostGit:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(
        self,
        args: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
        check: bool = False,
    ) -> Completed:
        argv = ["git", *args]
        environ = {**self.env, **(env or {})}
        if check:
            return proc.check(argv, env=environ, cwd=self.home, timeout=_TIMEOUT, stdin_data=stdin)
        return proc.run(argv, env=environ, cwd=self.home, timeout=_TIMEOUT, stdin_data=stdin)

    def in_repo(self, repo: Path, *args: str, extra: Sequence[str] = ()) -> list[str]:
        """git's arguments for a command in the repository, after the safe config."""
        return ["-C", str(repo), *config_args([*SAFE_CONFIG, *extra]), *args]

    def filter_pairs(self, repo: Path) -> list[str]:
        """Config pairs that disable every filter driver the repository's config defines, so
        that `status` or `apply` never runs a command a committed .gitattributes names."""
        found = self.run(
            self.in_repo(repo, "config", "-z", "--name-only", "--get-regexp", "^filter\\.")
        )
        return neutralised([name for name in found.output.split("\0") if name.strip()])

    def find_root(self, repo: Path) -> Path | None:
        """The top folder of the repository holding `repo` (None: none does): `repo` itself or
        a parent of it, so a `core.worktree` in the config cannot point fixbot elsewhere."""
        done = self.run(self.in_repo(repo, "rev-parse", "--show-toplevel"))
        lines = done.output.strip().splitlines()
        if done.returncode != 0 or not lines:
            return None
        top = Path(lines[-1]).resolve()
        return top if repo.resolve().is_relative_to(top) else None

    def resolve_commit(self, repo: Path, ref: str) -> str | None:
        args = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"]
        done = self.run(self.in_repo(repo, *args))
        lines = done.output.strip().splitlines()
        if done.returncode != 0 or not lines or not _FULL_ID.match(lines[-1]):
            return None
        return lines[-1]

    def dirty_paths(self, repo: Path) -> list[str]:
        """Tracked paths that differ from HEAD, staged or not (submodules aside: the snapshot
        never holds their contents)."""
        args = ["status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all"]
        done = self.run(self.in_repo(repo, *args, extra=self.filter_pairs(repo)), check=True)
        return [line[3:] for line in done.output.splitlines() if len(line) > 3 and line[2] == " "]

    def origin_url(self, repo: Path) -> str:
        done = self.run(self.in_repo(repo, "config", "--get", "remote.origin.url"))
        return done.output.strip() if done.returncode == 0 else ""

    @contextmanager
    def shadow(self, repo: Path) -> Iterator[Path]:
        """A private GIT_DIR that reads `repo`'s objects and nothing else of it."""
        common = self.run(
            self.in_repo(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"),
            check=True,
        )
        objects = Path(common.output.strip().splitlines()[-1]) / "objects"
        if "\n" in str(objects) or not objects.is_dir():
            raise NotADirectoryError(f"no object store at {objects!r}")
        found = self.run(self.in_repo(repo, "rev-parse", "--show-object-format"))
        object_format = found.output.strip() if found.returncode == 0 else "sha1"
        folder = Path(tempfile.mkdtemp(prefix="fixbot-shadow-"))
        try:
            init = ["init", "--quiet", "--bare", "--template=", f"--object-format={object_format}"]
            self.run([*init, str(folder)], check=True)
            (folder / "objects" / "info").mkdir(parents=True, exist_ok=True)
            (folder / "objects" / "info" / "alternates").write_text(f"{objects}\n")
            (folder / "info").mkdir(exist_ok=True)
            (folder / "info" / "attributes").write_text(NEUTRAL_ATTRIBUTES)
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def export_commit(self, repo: Path, commit: str, dest: Path) -> None:
        """The commit's tree, byte for byte, into the empty folder `dest`."""
        if not _FULL_ID.match(commit):
            raise ValueError(f"{commit!r} is not a full object id (resolve it first)")
        with self.shadow(repo) as shadow:
            env = {
                "GIT_DIR": str(shadow),
                "GIT_INDEX_FILE": str(shadow / "index"),
                "GIT_WORK_TREE": str(dest),
            }
            for step in (["read-tree", commit], ["checkout-index", "--all"]):
                self.run([*config_args(SAFE_CONFIG), *step], env=env, check=True)
