#!/usr/bin/env bash
# Ends what one test run started, and nothing else. scripts/test.sh exports
# NASPERF_SUITE_RUN=<id> before its first stage; every process the run starts inherits
# it (chroots, qemu, `ip netns exec`, daemons that fork), and the tests' sshd passes it
# to its sessions (SetEnv in tests/integration/ssh_lib.sh). A process without the
# marker — a NAS's own agent, someone else's benchmark, another checkout's suite — is
# never named or touched, whatever its command line says.
#   scripts/leftovers.sh ID   waits up to LEFTOVERS_WAIT_TENTHS (100) tenths of a second
#                             for the marked processes to exit on their own; any still
#                             running then are named, killed (SIGKILL) and exit 1.
set -uo pipefail
id=${1:?usage: scripts/leftovers.sh RUN_ID}
# Its own children (grep, awk, sleep) must not carry the marker they look for.
[ -n "${NASPERF_SUITE_RUN:-}" ] && exec env -u NASPERF_SUITE_RUN bash "$0" "$@"
wait_tenths=${LEFTOVERS_WAIT_TENTHS:-100}

# The callers carry the marker themselves (test.sh exported it): never count what
# this script descends from.
declare -A exempt=()
pid=$$
while [ -n "$pid" ] && [ "$pid" -gt 1 ]; do
  exempt[$pid]=1
  pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null)
done

# marked: "PID COMMAND" of each live process whose environment holds the marker.
marked() {
  local file pid command
  while IFS= read -r file; do
    pid=${file#/proc/}
    pid=${pid%/environ}
    [ -n "${exempt[$pid]:-}" ] && continue
    [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = Z ] && continue
    # A process may end between the look and this read: then it is not left.
    command=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-200) || continue
    [ -n "$command" ] && echo "$pid $command"
  done < <(grep -lzxF "NASPERF_SUITE_RUN=$id" /proc/[0-9]*/environ 2>/dev/null)
}

left=""
for ((i = 0; i <= wait_tenths; i++)); do
  left=$(marked)
  [ -z "$left" ] && exit 0
  [ "$i" -lt "$wait_tenths" ] && sleep 0.1
done
echo "leftovers: processes this run started are still running (ended now):" >&2
echo "$left" >&2
mapfile -t pids < <(awk '{ print $1 }' <<<"$left")
kill -KILL "${pids[@]}" 2>/dev/null
exit 1
