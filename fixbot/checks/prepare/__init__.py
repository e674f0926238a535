"""The prepare step: the project's own environment, built by fixbot with the network from the
repository's `setup_command` (environment.py) over a shared virtualenv with pytest from the
package index (base.py: the version the project's files ask for, pins.py), each cached complete
or absent and sealed (cache.py), with the host's package-index settings (index.py), a
git-metadata project's pretended version (scm.py), what the install writes into the tree kept
for the checks (generated.py), and what the environment holds, read as data: its distributions
(site.py) and its pytest plugins (plugins.py).
"""

from __future__ import annotations

from fixbot.checks.prepare.base import shared_built, shared_environment
from fixbot.checks.prepare.environment import (
    checks_environment,
    environment_record,
    prepared_environment,
    prune_environments,
)
from fixbot.checks.prepare.generated import lay_generated
from fixbot.checks.prepare.index import IndexSettings, index_settings
from fixbot.checks.prepare.pins import PINNED, PYTEST_PIN
from fixbot.checks.prepare.plugins import plugin_options

__all__ = [
    "PINNED",
    "PYTEST_PIN",
    "IndexSettings",
    "checks_environment",
    "environment_record",
    "index_settings",
    "lay_generated",
    "plugin_options",
    "prepared_environment",
    "prune_environments",
    "shared_built",
    "shared_environment",
]
