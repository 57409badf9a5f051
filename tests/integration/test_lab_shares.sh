#!/usr/bin/env bash
# The lab's file servers, as the SMB and NFS transports and `watch` will meet them:
# `scripts/lab.sh shares` starts a real smbd and a real nfs-ganesha (NFSv3, its own
# rpcbind) on the NAS; Samba's own smbclient and libnfs's nfs-cp copy a file from the
# client into the cache and the array, and the NAS holds the same bytes; a wrong
# password is refused; `down` stops every server and removes the bind points.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 10gbit --disk-size 256M
lab_shares
head -c 4M /dev/urandom >"$T/payload"

for share in cache array; do
  dir=$CACHE
  [ $share = array ] && dir=$ARRAY
  on_client timeout 60 smbclient "//$NAS_IP/$share" -A "$SMB_CREDENTIALS" -m SMB3 -c "put $T/payload smb.dat" \
    >"$T/smbclient.log" 2>&1 || fail "smbclient put into $share: $(cat "$T/smbclient.log")"
  cmp -s "$T/payload" "$dir/smb.dat" || fail "the $share share holds other bytes than smbclient sent"
  on_client timeout 60 nfs-cp "$T/payload" "nfs://$NAS_IP$NFS_ROOT/$share/nfs.dat?uid=0&gid=0&version=3&autoreconnect=0" \
    >"$T/nfs-cp.log" 2>&1 || fail "nfs-cp into $share: $(cat "$T/nfs-cp.log")"
  cmp -s "$T/payload" "$dir/nfs.dat" || fail "the $share export holds other bytes than nfs-cp sent"
done
echo "ok: smbclient and nfs-cp each put 4 MiB into the cache and the array, byte for byte"

(umask 077; printf 'username=root\npassword=wrong\n' >"$T/wrong")
if on_client timeout 60 smbclient "//$NAS_IP/cache" -A "$T/wrong" -m SMB3 -c "put $T/payload no.dat" >"$T/wrong.log" 2>&1; then
  fail "smbd took a wrong password"
fi
grep -q NT_STATUS_LOGON_FAILURE "$T/wrong.log" || fail "a wrong password, not refused as such: $(cat "$T/wrong.log")"
[ ! -e "$CACHE/no.dat" ] || fail "a file arrived with a wrong password"
echo "ok: a wrong password is refused"

"$LAB_SH" down >"$T/down.log" 2>&1 || fail "lab.sh down: $(cat "$T/down.log")"
left=$(pgrep -f -a "smb.conf|ganesha.conf" | grep "/run/nasperf-lab/$NASPERF_LAB/" || true)
[ -z "$left" ] || fail "servers outlived the lab: $left"
[ ! -e "/srv/nasperf-lab/$NASPERF_LAB" ] || fail "the bind points outlived the lab"
echo "ok: down stopped smbd and nfs-ganesha and removed /srv/nasperf-lab/$NASPERF_LAB"
