#!/usr/bin/env bash
# Docker for fixbot's docker sandbox on a fresh Debian/Ubuntu CI machine, as root, idempotent:
# install docker.io, start dockerd in the background (log: $FIXBOT_DOCKERD_LOG), wait until it
# answers, and build the local sandbox image without any registry.
#
# The image (fixbot-sandbox:local) is a nearly empty root filesystem: /workspace, /fixbot-out,
# /tmp, a passwd with a `sandbox` user (uid 65534), and /bin, /lib... as this host has them.
# The sandbox bind-mounts the host's toolchain (/usr, /opt, the Python prefix, a few /etc files)
# read-only at run time, so the image must mirror this host's root layout: it is rebuilt
# whenever that layout changes.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

IMAGE=${FIXBOT_SANDBOX_IMAGE:-fixbot-sandbox:local}
LOG=${FIXBOT_DOCKERD_LOG:-/var/log/fixbot-dockerd.log}

if [ "$(id -u)" -ne 0 ]; then
    echo "docker-setup: run me as root" >&2
    exit 2
fi

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq docker.io >/dev/null
fi

answers() { timeout 10 docker info >/dev/null 2>&1; }

# start_dockerd [dockerd options...]: 0 once the engine answers, 1 if dockerd died or never did.
start_dockerd() {
    echo "docker-setup: starting dockerd${*:+ $*} (log: $LOG)" >&2
    # No bridge and no iptables: sandboxes run with --network none, and CI machines often have
    # no netfilter to give.
    nohup dockerd --iptables=false --bridge=none "$@" >>"$LOG" 2>&1 &
    local pid=$!
    for _ in $(seq 60); do
        if answers; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            return 1
        fi
        sleep 1
    done
    kill "$pid" 2>/dev/null || true
    return 1
}

if ! answers; then
    # overlay2 first (fast); vfs where the kernel or the filesystem refuses it (slow, works).
    if ! start_dockerd && ! start_dockerd --storage-driver=vfs; then
        echo "docker-setup: dockerd did not come up; the end of $LOG:" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
fi
docker version --format 'docker-setup: engine {{.Server.Version}}' >&2

# What the image must agree with: this host's /bin, /lib... (links or folders).
layout="v1"
for name in bin lib lib32 lib64 libx32; do
    if [ -L "/$name" ]; then
        layout="$layout $name->$(readlink "/$name")"
    elif [ -d "/$name" ]; then
        layout="$layout $name=dir"
    fi
done

current=$(docker image inspect --format '{{index .Config.Labels "fixbot.layout"}}' "$IMAGE" \
    2>/dev/null || true)
if [ "$current" = "$layout" ]; then
    echo "docker-setup: $IMAGE is up to date ($layout)" >&2
    exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{workspace,fixbot-out,tmp,etc,usr,proc,dev,sys,sbin}
chmod 0755 "$root" "$root"/{workspace,fixbot-out,etc,usr,sbin}
chmod 1777 "$root/tmp"
for name in bin lib lib32 lib64 libx32; do
    if [ -L "/$name" ]; then
        ln -s "$(readlink "/$name")" "$root/$name"
    elif [ -d "/$name" ]; then
        mkdir "$root/$name"
    fi
done
# /sbin is a real folder (the engine mounts its init at /sbin/docker-init); ldconfig is the one
# tool from it that Python (ctypes.util.find_library) asks for by that path.
ln -s /usr/sbin/ldconfig "$root/sbin/ldconfig"
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
sandbox:x:65534:65534:fixbot sandbox:/tmp:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
sandbox:x:65534:
EOF
chmod 0644 "$root/etc/passwd" "$root/etc/group"

tar --numeric-owner --owner=0 --group=0 -C "$root" -cf - . |
    docker import --change "LABEL fixbot.layout=\"$layout\"" \
        --message "fixbot sandbox root filesystem" - "$IMAGE" >/dev/null
echo "docker-setup: built $IMAGE ($layout)" >&2
