"""proc.py against real processes: exit codes, no shell, group kills, capped output, errors."""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import pytest

from fixbot import proc
from fixbot.proc import CommandFailed

PY = sys.executable


def py(code: str, *args: str) -> list[str]:
    return [PY, "-c", code, *args]


def alive(pid: int) -> bool:
    """Whether pid is a live process (a zombie waiting for its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("code", [0, 1, 3, 42])
def test_exit_code_is_reported(code: int) -> None:
    result = proc.run(py(f"raise SystemExit({code})"))
    assert result.returncode == code
    assert not result.timed_out
    assert result.argv == (PY, "-c", f"raise SystemExit({code})")


def test_stdout_and_stderr_are_interleaved_in_output() -> None:
    code = "import sys; print('out', flush=True); print('err', file=sys.stderr, flush=True)"
    result = proc.run(py(code))
    assert result.output == "out\nerr\n"
    assert result.output_bytes == len(b"out\nerr\n")
    assert not result.output_truncated


def test_shell_metacharacters_are_passed_literally(tmp_path: Path) -> None:
    canary = tmp_path / "created-by-a-shell"
    nasty = (
        f"$(touch {canary}) `touch {canary}`; touch {canary} | cat && echo * > {canary} '\" $HOME"
    )
    result = proc.run(py("import sys; sys.stdout.write(sys.argv[1])", nasty), cwd=tmp_path)
    assert result.returncode == 0
    assert result.output == nasty
    assert not canary.exists()


def test_cwd_and_env_are_the_ones_given(tmp_path: Path) -> None:
    code = "import os; print(os.getcwd()); print(sorted(k for k in os.environ if k != 'LC_CTYPE'))"
    result = proc.run(py(code), cwd=tmp_path, env={"ONLY_THIS": "1"})
    assert result.output.splitlines() == [str(tmp_path), "['ONLY_THIS']"]


def test_empty_argv_is_refused() -> None:
    with pytest.raises(ValueError, match="empty argv"):
        proc.run([])


def test_stdin_is_empty_without_data_and_delivered_with_it() -> None:
    read_all = py("import sys; sys.stdout.write(repr(sys.stdin.read()))")
    assert proc.run(read_all).output == "''"
    assert proc.run(read_all, stdin_data=b"hello\n").output == repr("hello\n")


def test_timeout_kills_the_whole_process_group_including_a_grandchild() -> None:
    # The shell's child is the grandchild of fixbot; it stays in the group the shell leads.
    start = time.monotonic()
    result = proc.run(["sh", "-c", "sleep 60 & echo $!; wait"], timeout=0.5)
    assert time.monotonic() - start < 10
    assert result.timed_out
    assert result.returncode == -9
    grandchild = int(result.output.split()[0])
    assert wait_dead(grandchild), f"grandchild {grandchild} survived the timeout"


def test_a_background_child_does_not_outlive_a_successful_run() -> None:
    start = time.monotonic()
    result = proc.run(["sh", "-c", "sleep 60 & echo $!"], timeout=30)
    assert time.monotonic() - start < 10
    assert result.returncode == 0
    assert not result.timed_out
    assert wait_dead(int(result.output.split()[0]))


def test_output_flood_keeps_head_and_tail_and_counts_what_was_dropped() -> None:
    cap = 64 * 1024
    middle = 50 * 1024 * 1024
    flood = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "out.write(b'HEAD-MARKER\\n')\n"
        "block = b'x' * 65536\n"
        f"for _ in range({middle} // 65536): out.write(block)\n"
        "out.write(b'\\nTAIL-MARKER\\n')\n"
    )
    total = len(b"HEAD-MARKER\n") + middle + len(b"\nTAIL-MARKER\n")
    tracemalloc.start()
    try:
        result = proc.run(py(flood), output_cap=cap, timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.returncode == 0
    assert result.output_bytes == total
    assert result.output_truncated
    assert len(result.output) < cap + 200
    assert result.output.startswith("HEAD-MARKER\n")
    assert result.output.endswith("\nTAIL-MARKER\n")
    assert f"[... {total - cap} bytes of output dropped ...]" in result.output
    # The flood streamed through: fixbot never held more than a few chunks of it.
    assert peak < 4 * 1024 * 1024, f"peak traced memory {peak} bytes"


def test_output_under_the_cap_is_kept_whole() -> None:
    result = proc.run(py("print('y' * 1000)"), output_cap=4096)
    assert result.output == "y" * 1000 + "\n"
    assert "dropped" not in result.output
    assert not result.output_truncated


def test_check_returns_the_result_on_success() -> None:
    assert proc.check(py("print('fine')")).output == "fine\n"


def test_check_raises_command_failed_with_argv_and_output_tail() -> None:
    argv = py("import sys; print('x' * 5000); print('the real reason'); sys.exit(3)")
    with pytest.raises(CommandFailed) as info:
        proc.check(argv)
    failure = info.value
    assert failure.result.argv == tuple(argv)
    assert failure.result.returncode == 3
    message = str(failure)
    assert message.startswith("command failed (3): ")
    assert "the real reason" in message
    assert "the real reason" in failure.result.tail()
    assert len(message) < 2000  # the tail, not the whole output


def test_check_raises_on_timeout() -> None:
    with pytest.raises(CommandFailed) as info:
        proc.check(["sleep", "30"], timeout=0.3)
    assert info.value.result.timed_out
    assert info.value.result.argv == ("sleep", "30")


def test_timeout_holds_while_stdin_data_is_unread() -> None:
    # More than a pipe buffer of input for a child that reads it only after 3 s: writing it
    # before the timeout clock starts would show as a late, untimed-out result.
    start = time.monotonic()
    child = ["sh", "-c", "sleep 3; cat > /dev/null"]
    result = proc.run(child, timeout=0.5, stdin_data=b"x" * 1_000_000)
    assert result.timed_out
    assert time.monotonic() - start < 2


def test_stdin_pipe_is_closed_when_the_child_does_not_read_it() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = proc.run(["true"], stdin_data=b"x" * 1_000_000)
        gc.collect()
    assert result.returncode == 0
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
