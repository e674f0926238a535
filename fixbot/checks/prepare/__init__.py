"""The prepare step: the project's own environment, built by fixbot with the network from the
repository's `setup_command` (environment.py), with the host's package-index settings (index.py),
a git-metadata project's pretended version (scm.py), what the install writes into the tree kept
for the checks (generated.py), and the environment's own pytest plugins (plugins.py).
"""

from __future__ import annotations

from fixbot.checks.prepare.environment import prepared_environment, prune_environments
from fixbot.checks.prepare.generated import lay_generated
from fixbot.checks.prepare.index import IndexSettings, index_settings
from fixbot.checks.prepare.plugins import plugin_options

__all__ = [
    "IndexSettings",
    "index_settings",
    "lay_generated",
    "plugin_options",
    "prepared_environment",
    "prune_environments",
]
