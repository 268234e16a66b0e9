#!/usr/bin/env bash
# Installs the target service from a source tree, as the Debian package does (on Debian,
# `dpkg -i packaging/build/nvmeof_*_all.deb` is the better way): the jar to
# /usr/share/nvmeof, the launcher to /usr/bin/nvmeof, the unit to /etc/systemd/system, the
# default config to /etc/nvmeof unless it exists, and the nvmeof system user. Run as root
# from the repository after `mvn -DskipTests package`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/../cli/build/nvmeof.jar"
[ -f "$jar" ] || { echo "install.sh: build first: mvn -DskipTests package" >&2; exit 1; }
install -D -m 0644 "$jar" /usr/share/nvmeof/nvmeof.jar
install -D -m 0755 "$here/../packaging/src/bin/nvmeof" /usr/bin/nvmeof
install -D -m 0644 "$here/nvmeof-target.service" /etc/systemd/system/nvmeof-target.service
getent group nvmeof >/dev/null || groupadd --system nvmeof
getent passwd nvmeof >/dev/null || useradd --system --gid nvmeof --home-dir /var/lib/nvmeof \
  --no-create-home --shell /usr/sbin/nologin --comment "nvmeof-java NVMe-oF target" nvmeof
install -d -m 0750 -o root -g nvmeof /etc/nvmeof
for f in target.conf target.json; do
  [ -f "/etc/nvmeof/$f" ] || install -m 0640 -o root -g nvmeof "$here/$f" "/etc/nvmeof/$f"
done
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  echo "installed; start with: systemctl enable --now nvmeof-target"
else
  echo "installed (systemd is not running here; start the unit where it is)"
fi
