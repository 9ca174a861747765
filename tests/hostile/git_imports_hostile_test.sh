#!/bin/sh
# Issue 32's hostile profile repositories and pull requests against `mlenvc get` and the cache:
# a committed `.mlenv` or `.mlenv/git` link (get wrote through it and deleted two levels below
# its target), a planted `mlenv.lock.tmp-<pid>` link, a committed or shipped mirror whose
# config redirects the fetch, a pull request that edits the cache and the lock's hash together,
# a branch named like the pinned commit, a lock naming a commit its branch never reached, one
# repository under several URL spellings, a blob inflated before its size was checked, a token
# in an import URL, and git's credential helper in its place.
# usage: git_imports_hostile_test.sh MLENVC SCENARIO [EXPECTED_DIR]   (KEEP=1 keeps the
# temporary folder; MLENV_UPDATE_GOLDENS=1 rewrites EXPECTED_DIR's files)
set -eu
mlenvc=$1 scenario=$2 expected=${3:-}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || { chmod -R u+w "$tmp"; rm -rf "$tmp"; }' EXIT
fail() { echo "FAIL ($scenario): $*" >&2; exit 1; }
export GIT_AUTHOR_NAME=Platform GIT_AUTHOR_EMAIL=platform@example.com
export GIT_COMMITTER_NAME=Platform GIT_COMMITTER_EMAIL=platform@example.com
# Fixed dates: the same commits on every run, so the expected outputs hold them.
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp/home" NO_COLOR=1
unset MLENV_PATH || true
mkdir -p "$HOME/.ssh"
echo "secret key" > "$HOME/.ssh/id_ed25519"

# Compares `$2` (the temporary folder and cache keys normalized) with EXPECTED_DIR/$1.
golden() {
  [ -n "$expected" ] || return 0
  sed -e "s|$tmp|TMP|g" -e 's|[0-9a-f]\{16\}\([./]\)|KEY\1|g' "$2" > "$tmp/normalized"
  if [ "${MLENV_UPDATE_GOLDENS:-}" = 1 ]; then
    cp "$tmp/normalized" "$expected/$1"
  else
    diff -u "$expected/$1" "$tmp/normalized" || fail "golden mismatch: $1"
  fi
}

# The platform team's profiles repository, tagged v1.
mkdir -p "$tmp/profiles/site"
cd "$tmp/profiles"
git init -q -b main .
cat > site/lab.mlenv <<'MLENV'
import "std/profiles/h100"

cluster lab extends h100.node4 {
  api             = "lab.example.org"
  final namespace = "trusted"
}
MLENV
git add -A && git commit -qm v1 && git tag v1
v1=$(git rev-parse HEAD)
url="file://$tmp/profiles"
# The cache keys: `git/<key>/` by the URL, the mirror `repos/<key>.git` by the repository
# (its path, however the URL spells it); before issue 32 the mirror's was the URL's too.
urlkey=$(printf '%s' "$url" | sha256sum | cut -c1-16)
key=$(printf '%s' "$tmp/profiles" | sha256sum | cut -c1-16)

# The researchers' repository: one file importing the profile at `$1` (default v1).
consumer() {
  rm -rf "$tmp/consumer" && mkdir -p "$tmp/consumer" && cd "$tmp/consumer"
  git init -q -b main .
  printf 'import "git::%s//site/lab?ref=%s" as site\n\ncluster mine extends site.lab {}\n' \
    "$url" "${1:-v1}" > team.mlenv
  git add -A && git commit -qm consumer
}

# Fails unless `$1` holds the E0226 refusal of a cache the repository ships.
refused_cache() {
  grep -q 'E0226' "$1" || { cat "$1"; fail "no E0226 for a cache the repository ships"; }
}

case $scenario in
committed_cache_link)
  # .mlenv -> a folder elsewhere: get wrote the cache there and pruned two levels below it.
  mkdir -p "$tmp/elsewhere/git/a/b"
  consumer
  ln -s "$tmp/elsewhere" .mlenv && git add .mlenv && git commit -qm 'cache link'
  if "$mlenvc" get > get.out 2> get.err; then fail "get wrote through a committed .mlenv link"; fi
  refused_cache get.err
  [ -d "$tmp/elsewhere/git/a/b" ] || fail "get deleted below the link's target"
  [ -z "$(ls -A "$tmp/elsewhere" | grep -v '^git$')" ] || fail "get wrote through the link"
  [ ! -e mlenv.lock ] || fail "a refused get wrote the lock"
  ;;
committed_git_link)
  # .mlenv/git -> $HOME: get's pruning of `git/<key>/<commit>` took ~/.ssh/id_ed25519.
  consumer
  mkdir .mlenv && ln -s "$HOME" .mlenv/git && git add .mlenv/git && git commit -qm 'git link'
  if "$mlenvc" get > get.out 2> get.err; then fail "get wrote through a committed .mlenv/git"; fi
  refused_cache get.err
  golden committed_git_link.get.expected get.err
  [ -f "$HOME/.ssh/id_ed25519" ] || fail "get deleted ~/.ssh/id_ed25519 through the link"
  if "$mlenvc" check team.mlenv 2> check.err; then fail "check read through .mlenv/git"; fi
  refused_cache check.err
  golden committed_git_link.check.expected check.err
  ;;
lock_temporary_link)
  # mlenv.lock.tmp-<pid>, the old temporary name, committed as a link: never written through.
  consumer
  # shellcheck disable=SC2016 # $$ is the inner shell's, the pid get runs as after exec
  sh -c 'ln -s "$1" "mlenv.lock.tmp-$$"; exec "$2" get' sh "$tmp/target" "$mlenvc" > get.out ||
    fail "get"
  [ ! -e "$tmp/target" ] || fail "get wrote the lock through a planted temporary link"
  [ -f mlenv.lock ] && [ ! -L mlenv.lock ] || fail "get did not write mlenv.lock itself"
  ;;
committed_mirror)
  # A committed mirror whose config sends the trusted URL to the attacker's repository.
  cp -r "$tmp/profiles" "$tmp/evil"
  (cd "$tmp/evil" && sed -i 's/"trusted"/"attacker"/' site/lab.mlenv && git commit -qam evil &&
    git tag -f v1 > /dev/null)
  consumer
  for k in "$key" "$urlkey"; do
    git init -q --bare ".mlenv/repos/$k.git"
    git -C ".mlenv/repos/$k.git" config "url.file://$tmp/evil.insteadOf" "$url"
  done
  git add -f .mlenv && git commit -qm 'ship a mirror'
  if "$mlenvc" get > get.out 2> get.err; then fail "get used a committed mirror"; fi
  refused_cache get.err
  # Shipped untracked (an archive, a copied folder): its config is never read either.
  git rm -rq --cached .mlenv && git commit -qm 'untrack the mirror'
  printf '.mlenv\n' >> .git/info/exclude
  "$mlenvc" get > get.out 2> get.err || { cat get.err; fail "get with an untracked mirror"; }
  grep -q "\"commit\": \"$v1\"" mlenv.lock || fail "the mirror's insteadOf redirected the fetch"
  ;;
edited_cache_and_hash)
  # A pull request edits the cached profile and the lock's hash to match: never compiled.
  consumer
  "$mlenvc" get > /dev/null || fail "get"
  printf '.mlenv\n' >> .git/info/exclude
  git add mlenv.lock && git commit -qm lock
  cached=".mlenv/git/$urlkey/$v1/site/lab.mlenv"
  sed -i 's/"trusted"/"attacker"/' "$cached"
  sum=$(printf 'site/lab.mlenv\0%s\0' "$(wc -c < "$cached" | tr -d ' ')" | cat - "$cached" |
    sha256sum | cut -d' ' -f1)
  sed -i "s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$sum\"/" mlenv.lock
  git add -f .mlenv mlenv.lock && git commit -qm 'pull request'
  if "$mlenvc" check team.mlenv 2> check.err; then fail "check used a committed cache"; fi
  refused_cache check.err
  if "$mlenvc" plan team.mlenv > /dev/null 2> plan.err; then fail "plan used a committed cache"; fi
  refused_cache plan.err
  # Untracked again (CI's fresh clone has no cache), get fetches the commit: the hash is wrong.
  git rm -rq --cached .mlenv && git commit -qm 'untrack'
  cp mlenv.lock lock.before
  if "$mlenvc" get > get.out 2> get.err; then fail "get accepted an edited hash"; fi
  grep -q 'error\[E0227\]' get.err || { cat get.err; fail "no E0227 for the edited hash"; }
  golden edited_hash.get.expected get.err
  cmp -s lock.before mlenv.lock || fail "get rewrote the edited hash"
  "$mlenvc" get --update "git::$url?ref=v1" > update.out || fail "get --update"
  grep -q 'sha256 was not the commit.s: corrected' update.out ||
    { cat update.out; fail "get --update rewrote the hash without a word"; }
  "$mlenvc" check team.mlenv || fail "check after get --update"
  ;;
branch_named_like_commit)
  # Whoever pushes to the profiles repository makes a branch named like the pinned commit.
  cd "$tmp/profiles"
  git checkout -qb "$v1"
  sed -i 's/"trusted"/"attacker"/' site/lab.mlenv && git commit -qam hijack
  git checkout -q main
  consumer "$v1"
  "$mlenvc" get > get.out 2> get.err || { cat get.err; fail "get of a commit pin"; }
  grep -q "\"commit\": \"$v1\"" mlenv.lock || fail "a branch named like the commit took the pin"
  ;;
inflated_blob)
  # A file far over the 4 MiB limit that compresses to almost nothing. The mirror already
  # holds it (libgit2's local transport packs whole objects: that is the fetch's cost, not the
  # read's), so get's own read is what is measured: the size is checked before inflating.
  cd "$tmp/profiles"
  head -c 67108864 /dev/zero > site/big.mlenv && git add site/big.mlenv && git commit -qm big
  git tag big
  consumer big
  printf 'import "git::%s//site/big?ref=big" as big\n' "$url" > big.mlenv
  git init -q --bare ".mlenv/repos/$key.git"
  git -C ".mlenv/repos/$key.git" fetch -q "$url" 'refs/tags/*:refs/tags/*'
  printf '.mlenv\n' >> .git/info/exclude
  if /usr/bin/time -o rss -f %M "$mlenvc" get big.mlenv > get.out 2> get.err; then
    fail "get read a 64 MiB file"
  fi
  grep -q 'larger than the limit' get.err || { cat get.err; fail "no size limit"; }
  # Inflated, the blob alone is 64 MiB resident.
  [ "$(tail -n 1 rss)" -lt 49152 ] || fail "get used $(tail -n 1 rss) KiB: the blob was inflated"
  ;;
lock_names_other_branch)
  # A pull request points the lock of `?ref=main` at a commit main never reached, with that
  # commit's own hash: get kept it.
  cd "$tmp/profiles"
  git checkout -qb evil
  sed -i 's/"trusted"/"attacker"/' site/lab.mlenv && git commit -qam evil
  evil=$(git rev-parse HEAD)
  git checkout -q main
  consumer main
  "$mlenvc" get > /dev/null || fail "get"
  sum=$(git -C "$tmp/profiles" show "$evil:site/lab.mlenv" > evil.mlenv &&
    printf 'site/lab.mlenv\0%s\0' "$(wc -c < evil.mlenv | tr -d ' ')" | cat - evil.mlenv |
    sha256sum | cut -d' ' -f1)
  sed -i -e "s/\"commit\": \"[0-9a-f]*\"/\"commit\": \"$evil\"/" \
    -e "s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$sum\"/" mlenv.lock
  if "$mlenvc" get > get.out 2> get.err; then fail "get kept a commit main never reached"; fi
  grep -q 'error\[E0228\]' get.err || { cat get.err; fail "no E0228"; }
  golden other_branch.get.expected get.err
  grep -q "\"commit\": \"$evil\"" mlenv.lock || fail "a failed get changed the lock"
  ;;
url_spellings)
  # One repository under three spellings (team.mlenv has the third) is one mirror, not three.
  consumer
  for spelling in "file://$tmp/./profiles" "$tmp/profiles"; do
    n=$((${n:-0} + 1))
    printf 'import "git::%s//site/lab?ref=v1" as s\n' "$spelling" > "spelling$n.mlenv"
  done
  "$mlenvc" get > get.out 2> get.err || { cat get.err; fail "get"; }
  [ "$(ls .mlenv/repos | wc -l)" = 1 ] || { ls .mlenv/repos; fail "one mirror per spelling"; }
  ;;
credentials_in_url)
  # A token in an import URL went into mlenv.lock, plans/_inputs, get's output and diagnostics.
  consumer
  printf 'import "git::https://user:s3cret@example.invalid/p.git//site/lab?ref=v1" as a\n' > a.mlenv
  printf 'import "git::https://ghp_s3cret@example.invalid/p.git//site/lab?ref=v1" as b\n' > b.mlenv
  for file in a.mlenv b.mlenv; do
    if "$mlenvc" check "$file" > out 2>&1; then fail "check accepted a URL with a token"; fi
    grep -q 'error\[E0220\].*carries credentials' out || { cat out; fail "no E0220 for $file"; }
    golden "credentials.$file.expected" out
    if grep -q s3cret out; then cat out; fail "check printed the token"; fi
    if "$mlenvc" get "$file" > out 2>&1; then fail "get accepted a URL with a token"; fi
    if grep -q s3cret out; then cat out; fail "get printed the token"; fi
    "$mlenvc" check --format=json "$file" > out 2>&1 || true
    if grep -q s3cret out; then cat out; fail "check --format=json printed the token"; fi
  done
  [ ! -e mlenv.lock ] || fail "get wrote a lock"
  ;;
credential_helper)
  # With no token in the URL, a private repository is reached through git's own credential
  # helpers (git-credential(1)): a server that asks for Basic authentication gets the helper's.
  cat > "$tmp/server.py" <<'PY'
import http.server, sys
class Ask(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization"):
            open(sys.argv[1], "a").write(self.headers["Authorization"] + "\n")
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="profiles"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Ask)
open(sys.argv[2], "w").write(str(server.server_port))
server.serve_forever()
PY
  python3 "$tmp/server.py" "$tmp/authorization" "$tmp/port" &
  server=$!
  trap 'kill $server 2>/dev/null; [ -n "${KEEP:-}" ] || { chmod -R u+w "$tmp"; rm -rf "$tmp"; }' EXIT
  while [ ! -s "$tmp/port" ]; do sleep 0.1; done
  git config --global credential.helper \
    '!f() { test "$1" = get && echo username=alice && echo password=from-helper; }; f'
  consumer
  printf 'import "git::http://127.0.0.1:%s/p.git//site/lab?ref=v1" as p\n' "$(cat "$tmp/port")" \
    > private.mlenv
  if "$mlenvc" get private.mlenv > get.out 2> get.err; then fail "get of a refusing server"; fi
  grep -qx "Basic $(printf 'alice:from-helper' | base64)" "$tmp/authorization" ||
    { cat get.err; fail "the credential helper's answer was not sent"; }
  ;;
*) fail "no such scenario" ;;
esac
echo "$scenario: ok"
