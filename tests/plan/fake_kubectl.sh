#!/bin/sh
# Stand-in for oc and kubectl (tests link it under both names): appends the name it was called
# by, its arguments and, for `-f -`, its stdin to $MLENV_FAKE_LOG; for `--from-file=K=/dev/stdin`
# it logs the byte count and hex of its stdin. Answers from $MLENV_FAKE_REPLIES, lines of
# `PATTERN|STATUS|OUTPUT`: the first line whose PATTERN occurs in the arguments prints OUTPUT (or
# the file FILE for `@FILE`) and exits STATUS (a PATTERN starting with `once:` is used once,
# then removed); otherwise `whoami --show-server` and `config view --minify` print the current
# server, $MLENV_FAKE_SERVER (default https://api.example.com:6443). As kubectl it refuses
# oc's own commands (whoami, rsync, start-build, ...), as real kubectl does; with
# MLENV_FAKE_API=kubernetes it answers as a plain Kubernetes cluster does, refusing to get or
# apply OpenShift's kinds (Route, Build, BuildConfig, ImageStream, ImageStreamTag,
# SecurityContextConstraints), so a Kubernetes env's tests fail when mlenvc sends it anything
# only OpenShift has. Fails when the arguments contain $MLENV_FAKE_FAIL; sleeps $MLENV_FAKE_SLEEP
# seconds when they contain $MLENV_FAKE_SLEEP_ON (default `rollout`), appending its pid to
# $MLENV_FAKE_PIDS when set; writes $MLENV_FAKE_WRITE_VALUE into the file $MLENV_FAKE_WRITE (to
# move a ref behind apply's back). As podman or buildah, `push --digestfile=FILE` writes
# `sha256:` and $MLENV_FAKE_DIGEST (64 hex digits, a fixed one by default) to FILE, as they do
# after a push. Builds as a cluster's:
# with $MLENV_FAKE_BUILDS (a directory) set, `start-build NAME -n NS` makes a new image, whose
# digest reference the file $MLENV_FAKE_BUILDS/NAME then holds (a reply `@FILE` prints it).
# `get istag NAME:TAG` that no reply answers prints that file, or fails NotFound before a build.
# For `--from-dir=DIR` it logs `context: ` and every path under DIR. As podman build,
# `--iidfile=FILE` gets an image ID; as enroot, `import -o FILE` writes FILE. With
# $MLENV_FAKE_STATE (a JSON file) it is also the API server: fake_api.py keeps the cluster's
# objects there and refuses what the server and the webhooks refuse (immutable Job and JobSet
# templates, Kueue's queue label, a shrinking claim, field-manager conflicts).
PATH=/usr/bin:/bin
log="${MLENV_FAKE_LOG:?}"
# One write per call line (O_APPEND): calls running side by side (dev-session's port-forward
# beside its sync) never mix their lines.
line="argv: $(basename "$0")"
for a in "$@"; do line="$line $a"; done
printf '%s\n' "$line" >> "$log"
stdin_file=
case " $* " in
  *" -f - "*) stdin_file=$(mktemp); trap 'rm -f "$stdin_file"' EXIT; cat > "$stdin_file"
    { printf 'stdin: '; cat "$stdin_file"; printf '\n'; } >> "$log" ;;
  *"=/dev/stdin "*) hex=$(od -An -tx1 -v | tr -d ' \n')
    printf 'stdin-bytes: %s %s\n' "$((${#hex} / 2))" "$hex" >> "$log" ;;
esac
for a in "$@"; do
  case "$a" in --from-dir=*)
    # What `oc start-build --from-dir` would upload: every path under the directory.
    printf 'context: %s\n' "$(cd "${a#--from-dir=}" && find . -mindepth 1 | sort | tr '\n' ' ')" \
      >> "$log" ;;
  esac
  case "$a" in --iidfile=*)
    # As podman build: the image ID, here the digest of the Dockerfile (`-f FILE`) it built.
    dockerfile=$(printf '%s\n' "$@" | sed -n '/^-f$/{n;p;}')
    printf 'sha256:%s' "$(cat "$dockerfile" 2>/dev/null | sha256sum | cut -c1-64)" \
      > "${a#--iidfile=}" ;;
  esac
  case "$a" in --digestfile=*)
    digest=${MLENV_FAKE_DIGEST:-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210}
    if [ -n "$MLENV_FAKE_BUILDS" ]; then
      # As a registry: each push of an image (the last argument) is a new digest.
      mkdir -p "$MLENV_FAKE_BUILDS"
      for image in "$@"; do :; done
      pushed="$MLENV_FAKE_BUILDS/push-$(printf '%s' "$image" | sha256sum | cut -c1-16)"
      digest=$(cat "$pushed" 2>/dev/null | sha256sum | cut -c1-64)
      printf '%s' "$digest" > "$pushed"
    fi
    printf 'sha256:%s' "$digest" > "${a#--digestfile=}" ;;
  esac
done
# As kubectl, oc's own commands do not exist.
if [ "$(basename "$0")" = kubectl ]; then
  case "$1" in whoami | rsync | start-build | new-project | project | adm | policy | new-app)
    echo "error: unknown command \"$1\" for \"kubectl\"" >&2; exit 1 ;;
  esac
fi
# As the API server of a plain Kubernetes cluster (MLENV_FAKE_API=kubernetes), for oc and kubectl
# alike: OpenShift's API groups are not served, so their kinds are neither read nor applied.
openshift_kinds='Route|Build|BuildConfig|ImageStream|ImageStreamTag|SecurityContextConstraints'
case "$(basename "$0"):${MLENV_FAKE_API:-}:$1" in
  oc:kubernetes:* | kubectl:kubernetes:*)
    case "$1:${2%%[/,]*}" in
      *:routes | *:route | *:routes.* | *:builds | *:build | *:builds.* | *:buildconfigs | \
      *:buildconfig | *:bc | *:imagestreams | *:imagestream | *:is | *:imagestreamtags | \
      *:imagestreamtag | *:istag | *:securitycontextconstraints | *:scc)
        case "$1" in get | delete | describe | patch | wait | label | annotate | edit)
          echo "error: the server doesn't have a resource type \"${2%%[/,]*}\"" >&2; exit 1 ;;
        esac ;;
    esac
    if [ -n "$stdin_file" ] && grep -qE "^kind: ($openshift_kinds)\$" "$stdin_file"; then
      kind=$(grep -oE "^kind: ($openshift_kinds)\$" "$stdin_file" | head -n 1)
      echo "error: resource mapping not found: no matches for kind \"${kind#kind: }\"" >&2
      exit 1
    fi ;;
esac
# As enroot: `import -o FILE URI` writes the squashfs FILE.
if [ "$(basename "$0")" = enroot ] && [ "$1" = import ] && [ "$2" = -o ]; then : > "$3"; fi
if [ -n "$MLENV_FAKE_SLEEP" ] && printf '%s' "$*" | grep -q -- "${MLENV_FAKE_SLEEP_ON:-rollout}"; then
  [ -z "$MLENV_FAKE_PIDS" ] || printf '%s\n' "$$" >> "$MLENV_FAKE_PIDS"
  # SIGTERM ends the sleep too, so a stopped stand-in leaves no process behind.
  sleep "$MLENV_FAKE_SLEEP" & sleeper=$!
  trap 'kill "$sleeper" 2>/dev/null; exit 143' TERM
  wait "$sleeper"
  trap - TERM
fi
if [ -n "$MLENV_FAKE_WRITE" ]; then
  mkdir -p "$(dirname "$MLENV_FAKE_WRITE")"
  printf '%s\n' "$MLENV_FAKE_WRITE_VALUE" > "$MLENV_FAKE_WRITE"
fi
if [ -n "$MLENV_FAKE_BUILDS" ] && [ "$1" = start-build ]; then
  mkdir -p "$MLENV_FAKE_BUILDS"
  ns=$(printf '%s\n' "$@" | sed -n '/^-n$/{n;p;}')
  digest=$(cat "$MLENV_FAKE_BUILDS/$2" 2>/dev/null | sha256sum | cut -c1-64)
  printf 'image-registry.openshift-image-registry.svc:5000/%s/%s@sha256:%s' "$ns" "$2" "$digest" \
    > "$MLENV_FAKE_BUILDS/$2"
fi
if [ -n "$MLENV_FAKE_FAIL" ] && printf '%s' "$*" | grep -q -- "$MLENV_FAKE_FAIL"; then exit 1; fi
# With $MLENV_FAKE_STATE (a JSON file), the cluster's objects are kept there and an apply the
# API server or a webhook would refuse is refused (fake_api.py names each rule's source).
if [ -n "$MLENV_FAKE_STATE" ] && [ "$(basename "$0")" != podman ]; then
  case "$1" in apply | delete)
    python3 -S "$(dirname "$(readlink -f "$0")")/fake_api.py" "$stdin_file" "$@" || exit 1 ;;
  esac
fi
if [ -n "$MLENV_FAKE_REPLIES" ] && [ -f "$MLENV_FAKE_REPLIES" ]; then
  n=0
  while IFS='|' read -r pattern status output; do
    n=$((n + 1))
    [ -n "$pattern" ] || continue
    case "$pattern" in once:*) key=${pattern#once:} ;; *) key=$pattern ;; esac
    if printf '%s' "$*" | grep -qF -- "$key"; then
      [ "$key" != "$pattern" ] && sed -i "${n}d" "$MLENV_FAKE_REPLIES"
      case "$output" in @*) cat "${output#@}" ;; *) printf '%s' "$output" ;; esac
      exit "$status"
    fi
  done < "$MLENV_FAKE_REPLIES"
fi
if [ -n "$MLENV_FAKE_BUILDS" ] && [ "$1" = get ] && [ "$2" = istag ]; then
  built="$MLENV_FAKE_BUILDS/${3%%:*}"
  [ -f "$built" ] && { cat "$built"; exit 0; }
  echo "Error from server (NotFound): imagestreamtags.image.openshift.io \"$3\" not found" >&2
  exit 1
fi
case " $* " in
  *" whoami --show-server "* | *" config view --minify "*)
    printf '%s\n' "${MLENV_FAKE_SERVER:-https://api.example.com:6443}" ;;
esac
exit 0
