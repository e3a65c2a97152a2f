#!/usr/bin/env bash
# The command of Beam's PROCESS environment on the test cluster (flinkcluster.sh env prints it):
#   --environment_type=PROCESS --environment_config='{"command":"<this file>","env":{...}}'
# A TaskManager runs it with the boot program's flags; it runs Beam's Go boot program
# (HAADE_FLINK_BOOT, default the one flinkcluster.sh builds) in a process group of its own and
# makes sure nothing outlives the TaskManager: when the TaskManager dies (kill -9) or stops the
# environment (SIGTERM), the boot program and the Go worker it started are killed too. Before,
# a TaskManager kill left both running as orphans.
set -u
BOOT="${HAADE_FLINK_BOOT:-${HAADE_CACHE:-$HOME/.cache/haade}/flink/beam-boot-2.77.0}"
taskmanager=$PPID
# A directory of its own for boot's staged files: Beam's PROCESS environment passes no
# --semi_persist_dir, so every boot on the host downloaded the worker binary to the same
# /tmp/staged/worker, and one truncated it while another copied it: the Go worker then died
# at once of a segmentation fault (seen with two TaskManagers on one host). Removed at exit.
semi="$(mktemp -d "${TMPDIR:-/tmp}/haade-worker-XXXXXX")"
# setsid: boot leads a new process group, so one kill reaches it and its worker.
setsid "$BOOT" --semi_persist_dir="$semi" "$@" &
child=$!
reap() {
	kill -TERM -- "-$child" 2>/dev/null
	sleep 2
	kill -KILL -- "-$child" 2>/dev/null
	rm -rf "$semi"
}
trap 'reap; exit 143' TERM INT HUP
while kill -0 "$child" 2>/dev/null; do
	if ! kill -0 "$taskmanager" 2>/dev/null; then
		echo "worker-process.sh: TaskManager $taskmanager is gone; killing boot $child and its worker" >&2
		kill -KILL -- "-$child" 2>/dev/null
		break
	fi
	sleep 1 &
	wait $! # interruptible by the trap, unlike a foreground sleep
done
wait "$child"
rc=$?
kill -KILL -- "-$child" 2>/dev/null # a worker left in the group
rm -rf "$semi"
exit "$rc"
