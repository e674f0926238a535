"""What the model is shown, within a budget: the task, the feedback, the templates.

Every prompt text lives in `templates/` (rendered with strict undefined variables); the code
here only chooses what goes in and how much of it fits.
"""

from __future__ import annotations

from fixbot.prompts.excerpts import file_to_return, prompt_values
from fixbot.prompts.failures import failing
from fixbot.prompts.messages import (
    Ask,
    Message,
    Shape,
    ShownLesson,
    diagnosis_messages,
    feedback,
    fit_jobs,
    resume_note,
    system_message,
    task_messages,
)
from fixbot.prompts.render import render
from fixbot.prompts.rewrite import rewritable
from fixbot.prompts.sources import names_a_test

__all__ = [
    "Ask",
    "Message",
    "Shape",
    "ShownLesson",
    "diagnosis_messages",
    "failing",
    "feedback",
    "file_to_return",
    "fit_jobs",
    "names_a_test",
    "prompt_values",
    "render",
    "resume_note",
    "rewritable",
    "system_message",
    "task_messages",
]
