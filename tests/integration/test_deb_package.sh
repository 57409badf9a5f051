#!/usr/bin/env bash
# Issue 13: the Debian package (scripts/package.sh) for Debian, Ubuntu and Proxmox
# hosts: its metadata and contents are sane, it installs into a scratch root with
# dpkg (maintainer scripts included), its systemd unit passes `systemd-analyze
# verify`, and the agent it installs runs from the packaged settings file and takes
# a sender's transfers. Issue 28: it holds the dynamic binary, which has SMB, and
# depends on the libraries that binary loads.
source "$(dirname "$0")/lib.sh"
need_root "dpkg --root and an agent on loopback"
src=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(newest "$src"/dist/nasperf_*_amd64.deb)
[ -n "$deb" ] || skip "no dist/nasperf_*_amd64.deb: run scripts/package.sh first (test.sh does)"

dpkg-deb --info "$deb" >"$T/info.txt" || fail "dpkg-deb cannot read $deb"
grep -q "^ Package: nasperf$" "$T/info.txt" || fail "no Package: nasperf in $(cat "$T/info.txt")"
grep -q "^ Architecture: amd64$" "$T/info.txt" || fail "not amd64"
depends=$(dpkg-deb --field "$deb" Depends)
for lib in libsmbclient libnfs13 libssh-4 libgrpc++1.51 libc6; do
  echo "$depends" | grep -q "\(^\|, \)$lib \?(" || fail "Depends lacks $lib: $depends"
done
dpkg-deb --contents "$deb" >"$T/contents.txt"
for path in ./usr/bin/nasperf ./lib/systemd/system/nasperf-agent.service ./etc/nasperf/agent.toml \
    ./usr/share/doc/nasperf/README.md ./usr/share/doc/nasperf/docs/guides/install.md; do
  grep -q " $path$" "$T/contents.txt" || fail "$path is not in the package"
done
[ "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" = /etc/nasperf/agent.toml ] || fail "agent.toml is not a conffile"
grep -q "^drwxr-xr-x root/root .* \./$" "$T/contents.txt" || fail "the package's / is not 0755 root: $(head -1 "$T/contents.txt")"

# Installed into a scratch root with dpkg itself (a dpkg database of its own).
root=$T/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# --force-depends: the scratch root's database lists none of this host's libraries.
dpkg --root="$root" --force-script-chrootless --force-not-root --force-depends --log=/dev/null -i "$deb" \
  >"$T/install.log" 2>&1 \
  || fail "dpkg -i into a scratch root failed: $(tail -5 "$T/install.log")"
grep -q "^Status: install ok installed" "$root/var/lib/dpkg/status" || fail "dpkg does not list it as installed"
[ -d "$root/srv/nasperf" ] || fail "postinst did not make /srv/nasperf"
grep -q "systemctl enable --now nasperf-agent" "$T/install.log" || fail "postinst does not say how to start the service"
"$root/usr/bin/nasperf" --version | grep -q dynamic || fail "the packaged binary is not the dynamic one"
# It has SMB: a share that is not there fails at the connection, not as "the static build".
rc=0
NASPERF_SMB_USER=x NASPERF_SMB_PASSWORD=y timeout 60 "$root/usr/bin/nasperf" sender --transport smb \
  --to smb://127.0.0.1:1/share --size 1MiB --no-progress --out "$T/smb" >"$T/smb.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the packaged binary over SMB to nothing: exit $rc: $(cat "$T/smb.log")"
! grep -q "static build" "$T/smb.log" || fail "the packaged binary has no SMB: $(cat "$T/smb.log")"

if command -v systemd-analyze >/dev/null; then
  # verify wants ExecStart's file to exist: the installed unit, with the binary's path
  # pointed into the scratch root (nothing else changed).
  sed "s|/usr/bin/nasperf|$root/usr/bin/nasperf|" "$root/lib/systemd/system/nasperf-agent.service" >"$T/nasperf-agent.service"
  systemd-analyze verify --man=no "$T/nasperf-agent.service" >"$T/verify.log" 2>&1 \
    || fail "systemd-analyze verify: $(head -3 "$T/verify.log")"
  ! grep -q "nasperf-agent.service" "$T/verify.log" || fail "systemd-analyze verify: $(head -3 "$T/verify.log")"
else
  echo "note: no systemd-analyze here; the unit was not verified"
fi

# The agent from the packaged settings (flags given after them override them).
mkdir -p "$T/target"
free_port
HOME=$T/home "$root/usr/bin/nasperf" --config "$root/etc/nasperf/agent.toml" agent --target "$T/target" --min-free 0 \
  --listen "127.0.0.1:$port" --port-file "$T/agent.ports" >"$T/agent.log" 2>&1 &
PIDS+=($!)
wait_port_file "the packaged agent to listen" "$T/agent.ports" "$!" "$T/agent.log"
"$NASPERF" sender --to "127.0.0.1:$port" --size 8MiB --runs 2 --out "$T/out" --no-progress --accept-new-agent-key \
  >"$T/tx.log" 2>&1 || fail "sender to the packaged agent failed: $(tail -5 "$T/tx.log")"
[ "$(csv_col "$T/out/transfers.csv" status | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "not 4 ok rows"
# A misspelt key in the settings is one clear error, not ignored.
printf '[agent]\ntarget = "/srv/nasperf"\nlisten-on = ":7600"\n' >"$T/bad.toml"
rc=0; "$root/usr/bin/nasperf" --config "$T/bad.toml" agent >"$T/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a misspelt key: rc $rc, $(cat "$T/bad.log")"
grep -q "listen-on" "$T/bad.log" || fail "a misspelt key: rc $rc, $(cat "$T/bad.log")"
echo "ok: $(basename "$deb") installs with dpkg, its unit verifies, its agent serves from agent.toml"
