#!/bin/sh
# Stand-in for oc and kubectl (tests link it under both names): appends the name it was called
# by, its arguments and, for `-f -`, its stdin to $MLENV_FAKE_LOG. Fails when the arguments
# contain $MLENV_FAKE_FAIL; sleeps $MLENV_FAKE_SLEEP seconds on `rollout`; writes
# $MLENV_FAKE_WRITE_VALUE into the file $MLENV_FAKE_WRITE (to move a ref behind apply's back).
PATH=/usr/bin:/bin
log="${MLENV_FAKE_LOG:?}"
printf 'argv: %s' "$(basename "$0")" >> "$log"
for a in "$@"; do printf ' %s' "$a" >> "$log"; done
printf '\n' >> "$log"
case " $* " in
  *" -f - "*) printf 'stdin: ' >> "$log"; cat >> "$log"; printf '\n' >> "$log" ;;
esac
if [ -n "$MLENV_FAKE_SLEEP" ] && [ "$1" = rollout ]; then sleep "$MLENV_FAKE_SLEEP"; fi
if [ -n "$MLENV_FAKE_WRITE" ]; then
  mkdir -p "$(dirname "$MLENV_FAKE_WRITE")"
  printf '%s\n' "$MLENV_FAKE_WRITE_VALUE" > "$MLENV_FAKE_WRITE"
fi
if [ -n "$MLENV_FAKE_FAIL" ] && printf '%s' "$*" | grep -q -- "$MLENV_FAKE_FAIL"; then exit 1; fi
exit 0
