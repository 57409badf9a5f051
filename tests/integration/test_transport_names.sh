#!/usr/bin/env bash
# Transports are named only in transport/ (issue 44): a transport's word, its
# protocol, its flags belong to its registry entry, and the rest of the product asks
# the registry. The words are `nasperf sender --help`'s (--transport TEXT:{...}, the
# registry's own list), so a new transport is checked as soon as it has an entry.
# Every product file outside transport/, tests/ and docs/ (*.cc, *.h, *.proto,
# CMakeLists.txt) that names one fails, a line each (file:line: text): a word in any
# case between non-alphanumerics, so also in an identifier (smb_credentials,
# NASPERF_SFTP_WRITE, which grep -w would pass: "_" is a word character),
# unless the allow-list below takes it, each entry with its reason. An entry that
# takes nothing any more fails too: delete it, so the list only shrinks.
# No build tree, no root, no network: seconds.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "$root is not a git checkout (git grep reads it)"

words=$("$NASPERF" sender --help | sed -n 's/.*--transport TEXT:{\([^}]*\)}.*/\1/p')
[ -n "$words" ] || fail "no '--transport TEXT:{...}' in nasperf sender --help to take the words from"
[[ $words =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] || fail "--transport's words are not a comma list of lowercase words: $words"
# A word the code also uses in its everyday sense ("path": 600 lines say a file's or a
# network's path) is looked for only as a quoted string ("path"), the form in which
# code would name the transport (transport == "path").
everyday=(path)
plain=() quoted=()
IFS=, read -r -a all_words <<<"$words"
for word in "${all_words[@]}"; do
  if [[ " ${everyday[*]} " == *" $word "* ]]; then quoted+=("$word"); else plain+=("$word"); fi
done
pattern=$(IFS='|'; echo "${plain[*]}")
quoted_pattern=$(IFS='|'; echo "${quoted[*]}")

# PATH|TEXT|REASON: a hit in PATH (a file, or a prefix ending in / or .) whose line
# holds TEXT (a fixed string; empty: any line) is allowed, for REASON.
allowed=(
  "watch/||names the servers whose copies it observes on the NAS (smbd, nfsd, sshd's sftp), not nasperf's transports"
  "cli/watch_command.cc||watch's help: the protocols of the copies it observes on the NAS"
  "common/policy.h|(smbd, sshd, the NFS|the NAS's server processes a server-cpu verdict blames (watch)"
  "measure/verdict.cc|(smbd, sshd, the NFS server)|the NAS's server processes a server-cpu verdict blames (watch)"
  "proto/nasperf.proto|(an SMB or NFS server, sshd, another nasperf)|the servers whose copies watch observes"
  "proto/nasperf.proto|over SMB and its own worker processes|FsWorkerCall is SMB's worker protocol; its LOGIN becomes to + flag words (issue 44 plan 12)"
  "proto/nasperf.proto|LOGIN = 1;        // SMB today|FsWorkerCall is SMB's worker protocol; its LOGIN becomes to + flag words (issue 44 plan 12)"
  "ssh/deploy.||SFTP is the deploy's protocol (the upload of the static binary), libssh's sftp_* calls"
  "ssh/ssh_session.||the libssh session opens the SFTP channel (the deploy's and the sftp transport's): libssh's sftp_* API and its errors"
  "ssh/ssh_options.h||kMaxSftpWrite: the SFTP message limit the deploy's upload and the sftp transport share"
  "datapath/stream_pusher.h|inline constexpr char kWireTransport[] = \"native\";|the agent wire's word: its receiver's rows say it, and the registry's entry is named by it"
  "measure/mounts.||the kernel's file-system types of a mount (nfs, nfs4, cifs) and their sources, as /proc/self/mountinfo names them: what a mounted path is on, not a transport"
  "report/html.cc|\"trend\", \"n counts\", \"path\", \"NAS device\"|the report's \"path\" column heading: the network path's facts, not the path transport"
)

regex="(^|[^[:alnum:]])($pattern)([^[:alnum:]]|\$)"
[ ${#quoted[@]} -eq 0 ] || regex+="|\"($quoted_pattern)\""
mapfile -t hits < <(git -C "$root" grep -n -I -iE "$regex" -- '*.cc' '*.h' '*.proto' '*CMakeLists.txt' \
  ':!transport/' ':!tests/' ':!docs/' || true)
declare -A used
failed=0
for hit in "${hits[@]}"; do
  file=${hit%%:*}
  text=${hit#*:*:}
  ok=0
  for i in "${!allowed[@]}"; do
    IFS='|' read -r path want _ <<<"${allowed[$i]}"
    if [[ $file == "$path" || ( $path == */ || $path == *. ) && $file == "$path"* ]] &&
       [[ -z $want || $text == *"$want"* ]]; then
      ok=1
      used[$i]=1
      break
    fi
  done
  if [ $ok -eq 0 ]; then
    echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): $text"
    failed=1
  fi
done
for i in "${!allowed[@]}"; do
  [ -n "${used[$i]:-}" ] || { echo "allow-list entry that takes no line now (delete it): ${allowed[$i]}"; failed=1; }
done
[ $failed -eq 0 ] || fail "the lines above name a transport ($pattern) outside transport/ (ask the registry, or allow-list the line with its reason), or allow-list entries in $0 take nothing"
echo "ok: ${#hits[@]} lines outside transport/ name a transport ($pattern), each allow-listed with its reason"
