# The image fixbot runs in, on a CI machine or with `docker run`: Python 3.11, git, bubblewrap,
# fixbot, and a non-root user. The base is pinned to an exact Python patch release on Debian 12;
# pin its digest too (`python:3.11.13-slim-bookworm@sha256:...`) where builds must be bit-for-bit.
#
#   docker build -t fixbot .
#   docker run --rm --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#       -v "$PWD:/workspace" -e OPENAI_API_KEY -e FIXBOT_MODEL fixbot fix /workspace
#
# bubblewrap creates user and network namespaces; Docker's default seccomp and AppArmor profiles
# forbid that, hence the two options (no extra capabilities and no --privileged are needed).
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
FROM ${PYTHON_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates git \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /tmp/fixbot-src
COPY pyproject.toml README.md ./
COPY fixbot ./fixbot
RUN python -m pip install --no-compile . \
 && rm -rf /tmp/fixbot-src

# Runs as an ordinary user: the sandbox maps each command to `nobody` in a user namespace.
RUN groupadd --gid 10001 fixbot \
 && useradd --uid 10001 --gid fixbot --create-home --shell /usr/sbin/nologin fixbot \
 && git config --system --add safe.directory /workspace
USER fixbot
WORKDIR /workspace

ENTRYPOINT ["fixbot"]
CMD ["--help"]
