#!/usr/bin/env bash
# Prepares this machine for the tests that confine tools (bubblewrap, Landlock, podman),
# offline: Debian's podman with runc and a containers.conf this kernel needs, and the base
# image localhost/delta-busybox:latest built from Debian's busybox-static (no registry is
# reachable). Needs root; idempotent (a second run changes nothing and takes about a
# second). The packages themselves are installed by tests/setup.sh.
set -euo pipefail

image=${DELTA_TEST_IMAGE:-localhost/delta-busybox:latest}
conf=/etc/containers/containers.conf

if [ "$(id -u)" -ne 0 ]; then
  echo "tests/confinement/setup.sh: needs root (writes $conf, builds $image)" >&2
  exit 2
fi

# runc, not crun: crun fails on this kernel's mixed cgroup v1/v2 layout. No default
# ulimits: podman's default open-files limit (1048576) is above this machine's hard
# limit, and root here lacks CAP_SYS_RESOURCE to raise it ("error setting rlimit type 7").
# No systemd runs here: cgroupfs and a file events log.
want='# written by tests/confinement/setup.sh (Delta Engine tests)
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
'
mkdir -p /etc/containers
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$(printf '%s' "$want")" ]; then
  printf '%s' "$want" > "$conf"
fi

work=
ctx=
trap 'rm -rf ${work:+"$work"} ${ctx:+"$ctx"}' EXIT

build_base() {
  work=$(mktemp -d /var/tmp/delta-rootfs.XXXXXX)
  root=$work/rootfs
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,root,app,proc,sys,dev,var/tmp,home}
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 700 "$root/root"
  cp /bin/busybox "$root/bin/busybox"
  chroot "$root" /bin/busybox --install -s
  [ -e "$root/bin/sh" ] || ln -s busybox "$root/bin/sh"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
  echo 'hosts: files' > "$root/etc/nsswitch.conf"
  printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"
  tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
  podman import -q \
    --change 'CMD ["/bin/sh"]' \
    --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'WORKDIR /' \
    --message 'delta-busybox: an offline busybox-static root file system' \
    "$work/rootfs.tar" "$image" > /dev/null
}
if ! podman image exists "$image"; then
  build_base
fi

# A second image for the tests whose tools need more than busybox (persistent shells,
# Python, an MCP server written in Python): bash and python3 with the libraries they load,
# copied from this machine onto the base image; `delta-sessions` is added by the tests that
# use it (it changes with every build).
tools_image=${DELTA_TOOLS_IMAGE:-localhost/delta-tools:latest}
build_tools() {
  ctx=$(mktemp -d /var/tmp/delta-tools.XXXXXX)
  # Debian's python3 (a python3 earlier on PATH may live in a home directory).
  python=$(readlink -f /usr/bin/python3 2>/dev/null || readlink -f "$(command -v python3)")
  stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
  copy() {
    for file in "$@"; do
      real=$(readlink -f "$file")
      mkdir -p "$ctx/root$(dirname "$real")"
      cp -L "$real" "$ctx/root$real"
    done
  }
  binaries=("$(readlink -f "$(command -v bash)")" "$python")
  libraries=$({ ldd "${binaries[@]}" "$stdlib"/lib-dynload/*.so 2>/dev/null || true; } \
    | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
  gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 / {print $NF; exit}')
  copy "${binaries[@]}"
  # Into a directory the loader searches without an ld.so.cache; the loader itself where
  # the programs name it.
  libc=$(ldd "${binaries[0]}" | awk '$1 == "libc.so.6" {print $3}')
  libdir=$ctx/root$(dirname "$(readlink -f "$libc")")
  mkdir -p "$libdir" "$ctx/root/lib64"
  # shellcheck disable=SC2086 # one path per word
  cp -L $libraries $gcc_s "$libdir/"
  cp -L /lib64/ld-linux-x86-64.so.2 "$ctx/root/lib64/"
  ln -sf "$(basename "$python")" "$ctx/root$(dirname "$python")/python3"
  mkdir -p "$ctx/root$(dirname "$stdlib")"
  tar -C "$(dirname "$stdlib")" --exclude=test --exclude=__pycache__ --exclude=site-packages \
    --exclude=dist-packages -cf - "$(basename "$stdlib")" | tar -C "$ctx/root$(dirname "$stdlib")" -xf -
  printf 'FROM %s\nCOPY root/ /\n' "$image" > "$ctx/Dockerfile"
  podman build --network none --pull=never -q -t "$tools_image" "$ctx" > /dev/null
}
if ! podman image exists "$tools_image"; then
  build_tools
fi
