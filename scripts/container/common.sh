# shellcheck shell=bash
# Shared by scripts/container/*: sourced, not run.

# Debian's buildah and mmdebstrap, installed when missing. policy-rc.d keeps any package from
# starting a service of its own during the install (there is no init system to hand it to here).
ensure_container_tools() {
  local missing=() tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing ${missing[*]} (apt-get)"
  [ "$(id -u)" -eq 0 ] || die "installing ${missing[*]} needs root"
  apt-get update -qq
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  local status=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
  rm -f /usr/sbin/policy-rc.d
  [ "$status" -eq 0 ] || die "apt-get install ${missing[*]} failed"
}

die() {
  echo "!! $*" >&2
  exit 1
}

# The image's name and version, from package.json (no Node.js needed beyond the host's).
package_version() {
  node -p 'require("./package.json").version'
}

# The stand-in for node:24-bookworm-slim that make-base builds (no registry is reachable here).
: "${FILESHARE_NODE_MAJOR:=24}"
: "${FILESHARE_BASE_IMAGE:=localhost/fileshare-node-base:${FILESHARE_NODE_MAJOR}}"
: "${FILESHARE_IMAGE:=localhost/fileshare}"
