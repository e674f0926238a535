#!/usr/bin/env bash
# Copy the bundled broken example to a temporary git repo and run fixbot on it.
# Needs a model: OPENAI_API_KEY (and FIXBOT_MODEL, e.g. gpt-4o-mini), or OPENAI_BASE_URL pointing
# at a local OpenAI-compatible server (then any OPENAI_API_KEY) plus FIXBOT_MODEL.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(mktemp -d "${TMPDIR:-/tmp}/fixbot-example.XXXXXX")
cp -R "$here/calc/." "$repo/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=example -c user.email=example@invalid commit -qm "broken calc"
echo "example repository: $repo" >&2
exec fixbot fix "$repo" "$@"
