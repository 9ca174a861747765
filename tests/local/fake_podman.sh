#!/bin/sh
# Stand-in for podman and docker (tests link it under either name) that runs "containers" on
# the host: appends `argv: NAME ARGS...` to $MLENV_FAKE_LOG, and
#   build ...                       does nothing more (the image is the host)
#   run [OPTIONS] IMAGE ARGS...     becomes the entrypoint's basename from PATH with ARGS, in
#                                   the `-w` directory, with `-e K=V` set (`-e NAME` is
#                                   inherited); `--name N` is remembered in $MLENV_FAKE_CONTAINERS
#   rm -f NAMES...                  ends each remembered container (SIGTERM) and forgets it
#   exec [-i] [-t] -w DIR NAME CMD  runs CMD in DIR with MLENV_FAKE_CONTAINER=NAME
log="${MLENV_FAKE_LOG:?}"
dir="${MLENV_FAKE_CONTAINERS:?}"
line="argv: $(basename "$0")"
for a in "$@"; do line="$line $a"; done
printf '%s\n' "$line" >> "$log"
cmd=$1
shift
case $cmd in
  build) exit 0 ;;
  run)
    entry='' name=''
    while [ $# -gt 0 ]; do
      case $1 in
        --rm) shift ;;
        --name) name=$2; shift 2 ;;
        -w) cd "$2" || exit 125; shift 2 ;;
        -e) case $2 in *=*) export "$2" ;; esac; shift 2 ;;
        --entrypoint) entry=$2; shift 2 ;;
        --network|--ipc|-v|--device|--gpus) shift 2 ;;
        -*) echo "fake_podman: unknown option $1" >&2; exit 125 ;;
        *) break ;;
      esac
    done
    shift  # the image
    [ -z "$name" ] || echo $$ > "$dir/$name"
    exec "$(basename "$entry")" "$@"
    ;;
  rm)
    [ "$1" = -f ] && shift
    for name in "$@"; do
      [ -f "$dir/$name" ] && kill -TERM "$(cat "$dir/$name")" 2>/dev/null
      rm -f "$dir/$name"
    done
    exit 0
    ;;
  exec)
    while [ $# -gt 0 ]; do
      case $1 in
        -i|-t) shift ;;
        -w) cd "$2" || exit 126; shift 2 ;;
        *) break ;;
      esac
    done
    [ -f "$dir/$1" ] || { echo "Error: no container with name $1" >&2; exit 125; }
    MLENV_FAKE_CONTAINER=$1
    export MLENV_FAKE_CONTAINER
    shift
    exec "$@"
    ;;
esac
echo "fake_podman: $cmd is not known here" >&2
exit 125
