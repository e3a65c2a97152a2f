#!/usr/bin/env bash
# kcat, the standard Kafka producer and consumer that the e2e tier uses (Debian's package).
#
#   kcat.sh install   apt-get install kcat when it is missing (needs root; idempotent)
#   kcat.sh status    exit 0 when kcat is on PATH, 3 when it is not
#   kcat.sh start|stop  install / nothing, so that kcat can be treated like the services
#
# It is no server: the tests run it as a producer (-P) and as a consumer (-C).
set -euo pipefail
SERVICE=kcat
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_kcat() {
	command -v kcat >/dev/null && return 0
	((EUID == 0)) || die "kcat is not installed, and only root can apt-get install kcat"
	log "installing kcat from Debian's packages"
	local lf="$LOG_DIR/kcat-install.log"
	if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends kcat >"$lf" 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update >>"$lf" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends kcat >>"$lf" 2>&1 ||
			{ tail_log "$lf"; die "apt-get install kcat failed"; }
	fi
	command -v kcat >/dev/null || die "kcat installed, but it is not on PATH"
	log "kcat installed: $(kcat -V 2>&1 | grep -m1 Version || true)"
}

status() {
	if command -v kcat >/dev/null; then
		echo "kcat: $(command -v kcat) ($(kcat -V 2>&1 | grep -m1 -o 'Version [^ ]*' || echo unknown))"
		return 0
	fi
	echo "kcat: not installed"
	return 3
}

case "${1:-}" in
install | start) with_lock kcat-install install_kcat ;;
stop) : ;;
status) status ;;
*) echo "usage: $0 install|status" >&2; exit 2 ;;
esac
