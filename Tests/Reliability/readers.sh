#!/usr/bin/env bash
# The concurrency suite's readers (Tests/ReliabilityTests/ConcurrencyTests.swift):
# N loops, each running hd-ls, hd-search and hd-show in turn on the store of the
# environment ($HUDSON_DB), for SECONDS. Every exit status other than 0 or 1 (grep's
# "nothing matched") and every line on standard error is a failure, written to
# OUT/failures with the loop, the command and the status; OUT/count.<loop> gets the
# number of commands each loop ran.
#
#   Tests/Reliability/readers.sh SECONDS OUT N
set -u
seconds="$1" out="$2" loops="$3"
end=$(( $(date +%s) + seconds ))
mkdir -p "$out"
: >"$out/failures"

check() {  # loop command status stderr-file
    if [ "$3" -gt 1 ] || [ -s "$4" ]; then
        printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(tr '\n' ' ' <"$4" | head -c 300)" >>"$out/failures"
    fi
}

reader() {
    local loop="$1" runs=0 err="$out/err.$1" status thread
    while [ "$(date +%s)" -lt "$end" ]; do
        case $(( runs % 4 )) in
            0) hd-ls -n 20 >/dev/null 2>"$err"; status=$?; check "$loop" hd-ls "$status" "$err" ;;
            1) hd-search -n 10 'from:ada OR subject:re OR is:unread' >/dev/null 2>"$err"; status=$?
               check "$loop" hd-search "$status" "$err" ;;
            2) hd-search --count --messages 'has:attachment' >/dev/null 2>"$err"; status=$?
               # Its note on body-less mail (hd-search(1), "Attachments of mail whose body is
               # not stored") is documented output, not a failure.
               sed -i '/cannot be decided without their attachments/d' "$err"
               check "$loop" hd-search-count "$status" "$err" ;;
            3) thread="$(hd-ls -n 5 --ids 2>"$err" | tail -n 1)"; status=$?
               check "$loop" hd-ls-ids "$status" "$err"
               if [ -n "$thread" ]; then
                   hd-show --no-fetch "$thread" >/dev/null 2>"$err"; status=$?
                   check "$loop" hd-show "$status" "$err"
               fi ;;
        esac
        runs=$(( runs + 1 ))
    done
    echo "$runs" >"$out/count.$loop"
}

for loop in $(seq 1 "$loops"); do
    reader "$loop" &
done
wait
