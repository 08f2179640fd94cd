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

if podman image exists "$image"; then
  exit 0
fi
work=$(mktemp -d /var/tmp/delta-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
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
