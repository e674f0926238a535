"""What the model is shown, within a budget: the task, the feedback, the templates.

Every prompt text lives in `templates/` (rendered with strict undefined variables); the code
here only chooses what goes in and how much of it fits.
"""

from __future__ import annotations

from fixbot.prompts.failures import failing
from fixbot.prompts.messages import (
    Ask,
    Message,
    diagnosis_messages,
    feedback,
    resume_note,
    task_messages,
)
from fixbot.prompts.returned import definitions_to_return, file_to_return
from fixbot.prompts.review import read_verdict, review_messages
from fixbot.prompts.rewrite import rewritable
from fixbot.prompts.sources import names_a_test

__all__ = [
    "Ask",
    "Message",
    "definitions_to_return",
    "diagnosis_messages",
    "failing",
    "feedback",
    "file_to_return",
    "names_a_test",
    "read_verdict",
    "resume_note",
    "review_messages",
    "rewritable",
    "task_messages",
]
