#!/usr/bin/env bash
# Installs the target service: jar to /opt/nvmeof, unit to /etc/systemd/system, and the
# default config to /etc/nvmeof/target.conf and target.json unless they exist. Run as root from the
# repository after `mvn -DskipTests package`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/../cli/build/nvmeof.jar"
[ -f "$jar" ] || { echo "install.sh: build first: mvn -DskipTests package" >&2; exit 1; }
install -D -m 0644 "$jar" /opt/nvmeof/nvmeof.jar
install -D -m 0644 "$here/nvmeof-target.service" /etc/systemd/system/nvmeof-target.service
if [ ! -f /etc/nvmeof/target.conf ]; then
  install -D -m 0640 "$here/target.conf" /etc/nvmeof/target.conf
fi
if [ ! -f /etc/nvmeof/target.json ]; then
  install -D -m 0640 "$here/target.json" /etc/nvmeof/target.json
fi
install -d -m 0750 /var/lib/nvmeof
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  echo "installed; start with: systemctl enable --now nvmeof-target"
else
  echo "installed (systemd is not running here; start the unit where it is)"
fi
