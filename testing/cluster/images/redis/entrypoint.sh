#!/bin/sh
# redis-server with the password of $REDIS_PASSWORD, read with the rest of its configuration
# from standard input ("-"), so the password is on no command line; no persistence, as Argo CD
# runs it.
set -eu
: "${REDIS_PASSWORD:?the password comes from the Secret argocd-redis (key auth)}"
exec redis-server - "$@" <<EOF
requirepass "$REDIS_PASSWORD"
bind 0.0.0.0
protected-mode no
save ""
appendonly no
dir /data
EOF
