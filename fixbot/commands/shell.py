"""A shell script's text as syntax, never run: its command lines, and what only a shell reads.

    command_lines(script)   the lines of a `run:` block or a shell script, one command each; a
                            construct spanning lines (an if/for/case block, a function, a
                            heredoc, a quote or a pipe across lines) is one line marked with why
                            it cannot be split safely
    shell_construct(line)   the first thing in a line only a shell understands (a pipe, `&&`,
                            `$VAR`, a redirection, a glob, ...), named; "" for none

Enough of the shell's grammar to split a script and to refuse what needs a shell, no more: the
words of a command fixbot runs come from words.py, beside it in commands/
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, where it starts
    text: str
    why: str = ""  # non-empty: a construct over several lines that cannot be split safely


_OPENERS = {"if": "fi", "for": "done", "while": "done", "until": "done", "select": "done"}
_OPENERS |= {"case": "esac", "{": "}", "(": ")"}
_AFTER = {";", "&&", "||", "|", "&", "(", ")", "()", "then", "do", "else", "elif", "{", ";;"}
_VARIABLE = re.compile(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|[@*#?$!0-9-])")


def command_lines(script: str) -> list[Line]:
    """The script's commands, one Line each, comments and blank lines dropped."""
    physical = script.splitlines()
    lines: list[Line] = []
    index = 0
    while index < len(physical):
        start, text, last = index, physical[index], physical[index]
        index += 1
        why = ""
        while True:
            if text.endswith("\\") and index < len(physical):  # a continuation: one line
                last = physical[index].strip()
                text, index = text[:-1] + " " + last, index + 1
                continue
            delimiter = _heredoc_end(last)
            if delimiter is not None:  # its body is data, not commands: skip to its end
                while index < len(physical) and physical[index].strip() != delimiter:
                    index += 1
                index, why, last = index + 1, why or "a heredoc", ""
            open_why = _open(text)
            if not open_why or index >= len(physical):
                why = why or open_why
                break
            why, last = why or open_why, physical[index]
            text, index = text + "\n" + last, index + 1
        if text.strip() and not text.strip().startswith("#"):
            lines.append(Line(start + 1, text.strip(), why))
    return lines


def _open(text: str) -> str:
    """Why `text` goes on past its line ("" when it is complete): an open quote, a trailing
    pipe or && / ||, an if/for/while/case/{ block not yet closed."""
    try:
        tokens = _words(text)
    except ValueError:
        return "a quoted string across lines"
    if tokens and tokens[-1] in ("|", "&&", "||"):
        return "a command across lines"
    stack: list[str] = []
    position = True  # a command word may start here
    for word in tokens:
        if position and word in _OPENERS and not (stack and stack[-1] == "esac" and word == "("):
            stack.append(_OPENERS[word])
        elif stack and word == stack[-1] and (position or word in ")}"):
            stack.pop()
        position = word in _AFTER or (position and word in _OPENERS)
    return f"a multi-line {_block(stack[0])} block" if stack else ""


def _block(closer: str) -> str:
    return {"fi": "if", "done": "loop", "esac": "case", "}": "{ }", ")": "( )"}[closer]


def _words(text: str) -> list[str]:
    """The shell words and operators of `text`, quotes taken off, comments dropped, a newline
    as `;`. ValueError for a quote left open. (Enough to find blocks and heredocs; the words of
    a check come from shlex.)"""
    words: list[str] = []
    word, quote, started, i = "", "", False, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                word, i = word + text[i + 1 : i + 2], i + 1
            else:
                word += ch
        elif ch == "\\":
            word, i, started = word + text[i + 1 : i + 2], i + 1, True
        elif ch in "'\"":
            quote, started = ch, True
        elif ch == "#" and not started:
            end = text.find("\n", i)
            i = (len(text) if end < 0 else end) - 1
        elif ch in " \t\n;&|()<>":
            if started:
                words.append(word)
            word, started = "", False
            operator = next((op for op in _OPERATOR_WORDS if text.startswith(op, i)), ch)
            if ch == "\n":
                operator = ";"
            if ch not in " \t":
                words.append(operator)
            i += len(operator) - 1 if ch != "\n" else 0
        else:
            word, started = word + ch, True
        i += 1
    if quote:
        raise ValueError("a quote is left open")
    return [*words, word] if started else words


_OPERATOR_WORDS = ("<<<", "<<-", "<<", ">>", ";;", "&&", "||", "()", ">&", "<&")


def _heredoc_end(text: str) -> str | None:
    """The delimiter of a heredoc the line opens (`cat <<EOF`), else None."""
    try:
        words = _words(text)
    except ValueError:
        return None
    for i, word in enumerate(words[:-1]):
        if word in ("<<", "<<-"):
            return words[i + 1]
    return None


def shell_construct(text: str) -> str:
    """The first construct in `text` that only a shell understands, named; "" for none."""
    quote = ""
    word_start = True
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif ch == "`" or text.startswith("$(", i):
            return "a command substitution"
        elif variable := _VARIABLE.match(text, i):
            return f"a variable, {variable.group()}"
        elif quote == '"':
            quote = "" if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and word_start:
            return ""  # the rest is a comment
        elif found := _OPERATORS.get(text[i : i + 2]) or _OPERATORS.get(ch):
            return found
        elif ch == "~" and word_start:
            return "a ~ home directory"
        elif ch == "!" and word_start and text[i + 1 : i + 2] in ("", " "):
            return "a ! negation"
        word_start = ch in " \t" if not quote else False
        i += 1
    return ""


_OPERATORS = {
    "&&": "&&", "||": "||", "|": "a pipe", ";": "a ;", "&": "a background &",
    ">": "a redirection", "<": "a redirection", "(": "a subshell", ")": "a subshell",
    "*": "a glob", "?": "a glob",
}  # fmt: skip
