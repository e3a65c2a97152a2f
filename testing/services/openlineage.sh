#!/usr/bin/env bash
# The OpenLineage side of the lineage tests: a small venv with PyPI's openlineage-python (the
# OpenLineage client and its generated event model) and jsonschema. No server.
#
#   openlineage.sh install          make the venv (cached under $HAADE_CACHE; once)
#   openlineage.sh python ARGS...   run the venv's python (installs if needed)
#   openlineage.sh validate FILE... check OpenLineage events (one JSON event per line) with
#                                   testing/lineage/validate.py
#   openlineage.sh env              print export HAADE_OPENLINEAGE_PYTHON=...
#   openlineage.sh status           whether the venv is installed
#   openlineage.sh start|stop       no-ops that install / do nothing, so all.sh can treat it alike
set -euo pipefail
SERVICE=openlineage
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OPENLINEAGE_VERSION=1.54.0
JSONSCHEMA_VERSION=4.26.0
PYTHON="${PYTHON:-python3}"

PY_VER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
VENV_KEY="$(printf '%s\n' "$PY_VER" "$OPENLINEAGE_VERSION" "$JSONSCHEMA_VERSION" | sha256sum | cut -c1-12)"
VENV="$HAADE_CACHE/python/openlineage-py$PY_VER-$VENV_KEY"
VPY="$VENV/bin/python"
export PIP_CACHE_DIR="$HAADE_CACHE/pip"

make_venv() {
	[[ -f "$VENV/.complete" ]] && return 0
	log "creating venv $VENV (openlineage-python $OPENLINEAGE_VERSION, jsonschema $JSONSCHEMA_VERSION)"
	rm -rf "$VENV"
	mkdir -p "$(dirname "$VENV")" "$LOG_DIR"
	"$PYTHON" -m venv "$VENV"
	local lf="$LOG_DIR/openlineage-install.log"
	if ! "${NICE[@]}" "$VPY" -m pip install --disable-pip-version-check \
		"openlineage-python==$OPENLINEAGE_VERSION" "jsonschema==$JSONSCHEMA_VERSION" >"$lf" 2>&1; then
		tail_log "$lf" 40
		rm -rf "$VENV"
		die "pip install failed"
	fi
	"$VPY" -c 'import openlineage.client.event_v2, jsonschema' || { rm -rf "$VENV"; die "the new venv cannot import its packages"; }
	"$VPY" -m pip freeze --disable-pip-version-check >"$VENV/freeze.txt"
	touch "$VENV/.complete"
	log "venv ready: $VENV"
}

install() { with_lock "openlineage-venv" make_venv; }

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install | start) install ;;
stop) : ;;
status) if [[ -f "$VENV/.complete" ]]; then echo "openlineage: venv $VENV"; else echo "openlineage: venv not installed ($VENV)"; exit 3; fi ;;
python) install >&2; exec "$VPY" "$@" ;;
validate) install >&2; exec "$VPY" "$REPO_ROOT/testing/lineage/validate.py" "$@" ;;
env) install >&2; echo "export HAADE_OPENLINEAGE_PYTHON=$VPY" ;;
*) echo "usage: $0 install|python ARGS|validate FILE...|env|status" >&2; exit 2 ;;
esac
