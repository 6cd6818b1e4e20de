#!/bin/bash
# hyrax-ready.sh REPS DELAY: time to ready, and the requests the Source got
# until then, of a Hyrax Source of 50,000 works (100,002 resources, no
# lengths) behind DELAY per request: BASE (the rsfs to compare with) beside
# RSFS (this one, by default and with --learn-lengths=false), interleaved.
# Run as root: PUBSERVE=... BASE=... RSFS=... ./hyrax-ready.sh 3 0s
# (issue 39; pubserve is go build ./tests/publishers/cmd/pubserve).
set -e
reps=${1:-3}; delay=${2:-0s}
out=$(mktemp)
${PUBSERVE:?path of a pubserve binary} -publisher hyrax -n 50000 -update=false -delay $delay > $out &
pub=$!
trap "kill $pub" EXIT
while ! [ -s $out ]; do sleep 0.1; done
url=$(head -1 $out)
for i in $(seq $reps); do
  for bin in main new new-lookup; do
    exe=${BASE:?path of the rsfs to compare with}; [ $bin != main ] && exe=${RSFS:?path of this rsfs}; extra=; [ $bin = new-lookup ] && extra=--learn-lengths=false
    d=$(mktemp -d); mkdir $d/mnt
    before=$(kill -USR1 $pub; sleep 0.3; tail -1 $out)
    s=$(date +%s.%N)
    $exe mount "$url" $d/mnt --cache-dir none --log-file $d/log --poll-interval 0 $extra >/dev/null 2>&1
    e=$(date +%s.%N)
    after=$(kill -USR1 $pub; sleep 0.3; tail -1 $out)
    echo "$bin run=$i delay=$delay ready_s=$(echo "$e - $s" | bc) before=[$before] after=[$after]"
    umount $d/mnt; rm -rf $d
  done
done
