#!/usr/bin/env bash
# The command of Beam's PROCESS environment on the test cluster (flinkcluster.sh env prints it):
#   --environment_type=PROCESS --environment_config='{"command":"<this file>","env":{...}}'
#   worker-process.sh --sweep   only remove what killed copies left (flinkcluster.sh stop)
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
# A copy of this script killed with SIGKILL cannot remove its directory, nor kill its boot
# program: each directory records its owner and its boot, and every start sweeps the
# directories whose owner is gone (sweep, below), killing their boot's group if it still runs.
tmp="${TMPDIR:-/tmp}"
sweep() {
	local dir owner bootpid
	for dir in "$tmp"/haade-worker-*; do
		[[ -d "$dir" && -f "$dir/.owner" ]] || continue
		owner="$(cat "$dir/.owner" 2>/dev/null)"
		[[ -n "$owner" ]] && kill -0 "$owner" 2>/dev/null && continue
		bootpid="$(cat "$dir/.boot" 2>/dev/null)"
		# Only a process that is still this boot program, with this directory.
		if [[ -n "$bootpid" ]] && tr '\0' ' ' 2>/dev/null <"/proc/$bootpid/cmdline" | grep -qF -- "--semi_persist_dir=$dir"; then
			echo "worker-process.sh: killing boot $bootpid, left by a killed worker-process.sh $owner" >&2
			kill -KILL -- "-$bootpid" 2>/dev/null
		fi
		rm -rf "$dir"
	done
}
sweep
if [[ "${1:-}" == "--sweep" ]]; then # flinkcluster.sh stop: only the sweep
	exit 0
fi
semi="$(mktemp -d "$tmp/haade-worker-XXXXXX")"
echo $$ >"$semi/.owner"
# Beam's Go boot writes pipeline_options.json into its working directory, which is the
# TaskManager's: a TaskManager a test restarted left one in the test's package directory.
cd "$semi" || exit 1
# setsid: boot leads a new process group, so one kill reaches it and its worker.
setsid "$BOOT" --semi_persist_dir="$semi" "$@" &
child=$!
echo "$child" >"$semi/.boot"
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
