#!/usr/bin/env bash
# Issue 29 row 7: the binary `sender --to user@host:/dir` uploads runs as that user,
# so it must lie where no other user of the host can swap it after its bytes were
# checked. A cache directory that belongs to another user, or whose parent others may
# write (they could rename the cache away and put their own in its place), is not
# used: the binary goes into a private `mktemp -d` directory for that run, which is
# removed afterwards, and the cache stays empty. A host whose start script names its
# address as a DNS name or an escape sequence (`addr=` line) is refused with one line,
# before anything connects there. The NAS is a real sshd on loopback; the binary is a
# small static stand-in built here (the deploy checks only that it is a static ELF
# for this processor): it prints a key and, as a receiver, writes its port file or
# not, as each case needs.
# shellcheck disable=SC2154  # port, T: set by lib.sh
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"
command -v cc >/dev/null || skip "no C compiler to build the static stand-in binary"

# stand_in NAME EXTRA_KEY_OUTPUT LISTENS: a static ELF in $T/NAME.
stand_in() {
  cat >"$T/$1.c" <<C
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "fingerprint") == 0) {
    printf("SHA256:%s%s /tls.pem\\n", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "$2");
    return 0;
  }
  if (!$3) return 3;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--port-file") == 0) {
      FILE* f = fopen(argv[i + 1], "w");
      if (f == NULL) return 4;
      fputs("control=7600\\ndata=7601\\n", f);
      fclose(f);
    }
  }
  char b[64];
  while (read(0, b, sizeof b) > 0) {}
  return 0;
}
C
  cc -static -O1 -o "$T/$1" "$T/$1.c" 2>"$T/cc.log" || skip "cc -static failed (no static libc?): $(tail -2 "$T/cc.log")"
}
stand_in plain "" 0

NAS_CACHE=$T/nas/cache
mkdir -p "$T/nas"
SSHD_SETENV="XDG_CACHE_HOME=$NAS_CACHE"
start_sshd
trust_sshd

# deploy LOG BINARY: one deploying sender run toward the test sshd; its exit status.
deploy() {
  local rc=0
  "$NASPERF" sender --to "root@127.0.0.1:$T/remote" --ssh-port "$SSHD_PORT" --identity "$IDENTITY" \
    --known-hosts "$KNOWN_HOSTS" --ssh-config "$CLIENT_DIR/ssh_config" --no-progress --out "$T/out" \
    --deploy-binary "$2" --size 1MiB --runs 1 >"$T/$1.log" 2>&1 || rc=$?
  return $rc
}
# one_line LOG: the run failed with exactly one error line on it.
one_line() { [ "$(grep -c '^nasperf sender: ' "$T/$1.log")" = 1 ] || fail "$1: not one error line: $(cat "$T/$1.log")"; }

# --- a private cache is used (the stand-in then does not start: one line)
deploy private "$T/plain" && fail "the stand-in started as a receiver?"
grep -q "uploaded nasperf for x86_64 (.* MiB) to $NAS_CACHE/nasperf/nasperf-x86_64-" "$T/private.log" \
  || fail "a private cache was not used: $(cat "$T/private.log")"
one_line private
rm -rf "$NAS_CACHE"

# unsafe_case NAME: a run against the cache as the caller spoilt it; the binary must
# go to a private temporary directory, be gone after, and the cache stay empty.
unsafe_case() {
  deploy "$1" "$T/plain" && fail "$1: the stand-in started as a receiver?"
  grep -q "uploaded nasperf" "$T/$1.log" || fail "$1: no upload: $(cat "$T/$1.log")"
  [ -z "$(find "$NAS_CACHE/nasperf" -type f)" ] \
    || fail "$1: the binary went into a cache another user can swap: $(find "$NAS_CACHE/nasperf" -type f)"
  grep -q "not using the cache $NAS_CACHE/nasperf: .*$2" "$T/$1.log" || fail "$1: no line saying why: $(cat "$T/$1.log")"
  local temp
  temp=$(sed -n 's|.*uploaded nasperf for x86_64 (.* MiB) to \(/.*\)/nasperf-x86_64-.*|\1|p' "$T/$1.log")
  [ -n "$temp" ] || fail "$1: no upload line"
  [ ! -e "$temp" ] || fail "$1: the private directory $temp was left behind"
  one_line "$1"
}

# --- the cache belongs to another user (mode 0755: only its owner may write it)
mkdir -p "$NAS_CACHE/nasperf"
chmod 755 "$NAS_CACHE/nasperf"
chown 65534 "$NAS_CACHE/nasperf"
unsafe_case foreign_owner "belongs to another user (uid 65534)"
rm -rf "$NAS_CACHE"

# --- the cache's parent may be written by others: they could swap the whole cache
mkdir -p "$NAS_CACHE/nasperf"
chmod 700 "$NAS_CACHE/nasperf"
chmod 777 "$NAS_CACHE"
unsafe_case writable_parent "$NAS_CACHE is writable by others (mode 777)"
rm -rf "$NAS_CACHE"

# --- a cached copy that is not the user's own is replaced, not run
deploy seed "$T/plain" || true
cached=$(find "$NAS_CACHE/nasperf" -type f -name 'nasperf-x86_64-*')
[ -n "$cached" ] || fail "no cached copy after a run: $(cat "$T/seed.log")"
chown 65534 "$cached"
deploy foreign_copy "$T/plain" || true
grep -q "uploaded nasperf" "$T/foreign_copy.log" || fail "a cached copy of another user was reused: $(cat "$T/foreign_copy.log")"
[ "$(stat -c %u "$cached")" = 0 ] || fail "the cached copy still belongs to uid $(stat -c %u "$cached")"

# --- the host names its address as a DNS name, or as an escape sequence
stand_in evil_name '\naddr=evil.example' 1
stand_in evil_escape '\naddr=\033]0;pwned\007\033[2J' 1
for evil in evil_name evil_escape; do
  deploy "$evil" "$T/$evil" && fail "$evil: a hostile addr= line was accepted"
  grep -q "as the address this connection reached (SSH_CONNECTION), which is not an IP address" "$T/$evil.log" \
    || fail "$evil: a hostile addr= line was not refused: $(cat -v "$T/$evil.log")"
  one_line "$evil"
  ! grep -q $'\033' "$T/$evil.log" || fail "$evil: a raw ESC reached the terminal"
  ! grep -q "unreachable" "$T/$evil.log" || fail "$evil: nasperf tried to reach the address the host named"
done
grep -q 'gave "evil.example"' "$T/evil_name.log" || fail "the refusal does not quote the name"
grep -q 'gave "\\x1b]0;pwned\\x07\\x1b\[2J"' "$T/evil_escape.log" || fail "the escape is not shown escaped"
echo "ok: an unsafe cache is not used (a private temporary directory instead, removed after); a foreign cached copy is replaced; a hostile addr= is refused in one line"
