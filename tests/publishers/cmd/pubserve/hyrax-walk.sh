#!/bin/bash
# hyrax-walk.sh WORKS DELAY: ls -lR, grep -r and rsync -a over a Hyrax
# Source of WORKS works behind DELAY per request, each on a fresh mount,
# BASE (the rsfs to compare with) beside RSFS (this one): time to ready,
# the command's time, and the Source's requests from the mount to the
# command's end. Run as root: PUBSERVE=... BASE=... RSFS=...
# ./hyrax-walk.sh 5000 50ms (issue 39).
set -e
works=${1:-5000}; delay=${2:-50ms}
out=$(mktemp)
${PUBSERVE:?path of a pubserve binary} -publisher hyrax -n $works -update=false -delay $delay > $out &
pub=$!
trap "kill $pub" EXIT
while ! [ -s $out ]; do sleep 0.1; done
url=$(head -1 $out)
counts() { kill -USR1 $pub; sleep 0.3; tail -1 $out; }
for cmd in "ls -lR" "grep -r zzzz" "rsync -a"; do
  for bin in main new; do
    exe=${BASE:?path of the rsfs to compare with}; [ $bin = new ] && exe=${RSFS:?path of this rsfs}
    d=$(mktemp -d); mkdir $d/mnt $d/copy
    before=$(counts)
    s=$(date +%s.%N)
    $exe mount "$url" $d/mnt --cache-dir none --log-file $d/log --poll-interval 0 >/dev/null 2>&1
    r=$(date +%s.%N)
    case "$cmd" in
      rsync*) rsync -a $d/mnt/ $d/copy/ ;;
      grep*) grep -r zzzz $d/mnt >/dev/null || true ;;
      *) ls -lR $d/mnt > /dev/null ;;
    esac
    e=$(date +%s.%N)
    after=$(counts)
    n=$(find $d/copy -type f | wc -l)
    echo "$bin cmd='$cmd' works=$works delay=$delay ready_s=$(echo "$r - $s" | bc) cmd_s=$(echo "$e - $r" | bc) copied=$n before=[$before] after=[$after]"
    umount $d/mnt; rm -rf $d
  done
done
