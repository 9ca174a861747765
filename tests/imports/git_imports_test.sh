#!/bin/sh
# Git imports end to end, with real repositories made here: a profiles repository tagged v1 and
# v2 (and a branch), a consumer repository. get and mlenv.lock, check and plan offline, the
# plan's diff after moving to v2 and after `get --update` of a branch, `plan --check` failing on
# a lock change, `final` of a published profile, a moved tag, a tampered cache, a hand-edited
# lock, and what a git import may not reach (`..`, symbolic links, submodules, LFS pointers).
# usage: git_imports_test.sh MLENVC EXPECTED_DIR   (MLENV_UPDATE_GOLDENS=1 rewrites EXPECTED_DIR)
set -eu
mlenvc=$1 expected=$2
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Fixed names and dates: the same commits on every run, so the expected outputs hold them.
export GIT_AUTHOR_NAME=Platform GIT_AUTHOR_EMAIL=platform@example.com
export GIT_COMMITTER_NAME=Platform GIT_COMMITTER_EMAIL=platform@example.com
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" NO_COLOR=1
unset MLENV_PATH || true

# Compares a command's stderr (temporary folder and cache keys normalized) with EXPECTED/$1.
golden() {
  sed -e "s|$tmp|TMP|g" -e 's|git/[0-9a-f]\{16\}/|git/KEY/|g' "$2" > "$tmp/normalized"
  if [ "${MLENV_UPDATE_GOLDENS:-}" = 1 ]; then
    cp "$tmp/normalized" "$expected/$1"
  else
    diff -u "$expected/$1" "$tmp/normalized" || fail "golden mismatch: $1"
  fi
}

# --- the platform team's profiles repository ---------------------------------------------------
mkdir -p "$tmp/profiles/site" "$tmp/profiles/common"
cd "$tmp/profiles"
git init -q -b main .
cat > site/barcelona.mlenv <<'MLENV'
// The Barcelona cluster, as the platform team publishes it.
import "std/profiles/h100"
import "std/storage/ceph"

cluster barcelona extends h100.node4 {
  api             = "barcelona.nerc.mghpcc.org"
  final namespace = "nccl-test"
  storage         = ceph.per_pod
}
MLENV
cat > common/images.mlenv <<'MLENV'
// Images the platform team blesses.
import "std/images/pytorch"

image blessed extends pytorch.pytorch29 {
  apt += ["git"]
}
MLENV
git add -A && git commit -qm v1 && git tag v1
v1=$(git rev-parse HEAD)
sed -i 's/apt += \["git"\]/apt += ["git", "ffmpeg"]/' common/images.mlenv
git commit -qam v2 && git tag v2
v2=$(git rev-parse HEAD)
url="file://$tmp/profiles"

# --- the researchers' repository ------------------------------------------------------------------
mkdir -p "$tmp/consumer/envs"
cd "$tmp/consumer"
git init -q -b main .
printf '*.err\n*.out\nlock.before\n' >> .git/info/exclude  # this test's own outputs
cat > envs/team.mlenv <<MLENV
import "git::$url//site/barcelona?ref=v1" as site
import "git::$url//common/images?ref=v1"

env ml-dev-pod {
  cluster  = site.barcelona
  image    = images.blessed
  services = [vscode]
}
MLENV
git add -A && git commit -qm consumer

# Nothing is fetched behind the user's back: before get, check says what to run.
if "$mlenvc" check envs/team.mlenv 2> before.err; then fail "check passed without mlenv.lock"; fi
grep -q 'error\[E0221\]' before.err || fail "no E0221 before get"
grep -q 'run `mlenvc get`' before.err || fail "E0221 does not say to run mlenvc get"

(cd envs && "$mlenvc" get > ../get.out) || fail "get"
grep -q "git::$url?ref=v1  $(echo "$v1" | cut -c1-12)  2 files  (new)" get.out ||
  { cat get.out; fail "get does not report the v1 commit"; }
grep -q "\"commit\": \"$v1\"" envs/mlenv.lock || fail "the lock does not pin v1"
grep -q '"files": \["common/images.mlenv", "site/barcelona.mlenv"\]' envs/mlenv.lock ||
  fail "the lock does not list the files used"
# The lock's sha256 is the documented one (lock_file.h): path, NUL, size, NUL, bytes, per file.
cache=$(echo envs/.mlenv/git/*/"$v1")
sum=$(for f in common/images.mlenv site/barcelona.mlenv; do
  printf '%s\0%s\0' "$f" "$(wc -c < "$cache/$f" | tr -d ' ')"; cat "$cache/$f"; done |
  sha256sum | cut -d' ' -f1)
grep -q "\"sha256\": \"$sum\"" envs/mlenv.lock || fail "the lock's sha256 is not the files' ($sum)"
git check-ignore -q envs/.mlenv/git || fail "git does not ignore the cache"
[ "$(git status --porcelain)" = "?? envs/mlenv.lock" ] || { git status --porcelain; fail "get left more than the lock"; }
git add envs/mlenv.lock && git commit -qm lock
# Named from elsewhere, the FILE's folder holds the lock: nothing to change.
"$mlenvc" get envs/team.mlenv > again.out || fail "get FILE from the repository root"
grep -q '^mlenv.lock is up to date.$' again.out || { cat again.out; fail "get FILE rewrote the lock"; }
[ ! -e mlenv.lock ] && [ ! -e .mlenv ] || fail "get FILE wrote beside the working directory"

# Offline: with the profiles repository gone, check and plan read the cache.
mv "$tmp/profiles" "$tmp/profiles.away"
"$mlenvc" check envs/team.mlenv || fail "check offline"
"$mlenvc" plan envs/team.mlenv > plan1.out 2> plan1.err || { cat plan1.err; fail "plan offline"; }
inputs=plans/_inputs/envs%2Fteam.mlenv.json
grep -q "\"path\": \"git::$url//site/barcelona.mlenv?ref=v1\"" "$inputs" || fail "the plan does not name the git input"
grep -q "\"commit\": \"$v1\"" "$inputs" || fail "the plan does not record the resolved commit"
"$mlenvc" plan envs/team.mlenv --check > /dev/null || fail "--check on a fresh plan"
mv "$tmp/profiles.away" "$tmp/profiles"

# `final` in a published profile binds as it does locally; the note points into the profile.
cat > envs/override.mlenv <<MLENV
import "git::$url//site/barcelona?ref=v1" as site

cluster mine extends site.barcelona {
  namespace = "elsewhere"
}
MLENV
if "$mlenvc" check envs/override.mlenv 2> final.err; then fail "a final field was overridden"; fi
grep -q 'error\[E0308\]' final.err || fail "no E0308 for the final field"
grep -q "defined in \`site/barcelona.mlenv\` at $(echo "$v1" | cut -c1-7) of git::$url" final.err ||
  { cat final.err; fail "the note does not name the profile's source and commit"; }
"$mlenvc" check --format=json envs/override.mlenv 2> final.json || true
grep -q "\"origin\":\"\`site/barcelona.mlenv\` at $(echo "$v1" | cut -c1-7) of git::$url\"" final.json ||
  { cat final.json; fail "the JSON diagnostic does not name the profile's source and commit"; }
rm envs/override.mlenv

# A fresh clone has the lock but no cache: check says to run get, which fetches the locked commit.
mv envs/.mlenv cache.away
if "$mlenvc" check envs/team.mlenv 2> nocache.err; then fail "check passed without the cache"; fi
grep -q 'error\[E0221\].*is missing or stale' nocache.err || { cat nocache.err; fail "no E0221 for a missing cache"; }
(cd envs && "$mlenvc" get > /dev/null) || fail "get into an empty cache"
git diff --quiet envs/mlenv.lock || fail "get into an empty cache changed the lock"
"$mlenvc" check envs/team.mlenv || fail "check after get filled the cache"
rm -rf cache.away

# A tampered cache is refused, and get fetches it again.
echo "// edited" >> "$cache/site/barcelona.mlenv"
if "$mlenvc" check envs/team.mlenv 2> tampered.err; then fail "a tampered cache was used"; fi
golden tampered.expected tampered.err
(cd envs && "$mlenvc" get > /dev/null) || fail "get after tampering"
"$mlenvc" check envs/team.mlenv || fail "check after get repaired the cache"

# A hand-edited lock (a merge that kept the commit and took another hash): check refuses it,
# get says that the lock, not the cache, disagrees with the commit, and keeps the pinned hash.
cp envs/mlenv.lock lock.good
zeros=$(printf '%064d' 0)
sed -i "0,/\"sha256\": \"[0-9a-f]*\"/s//\"sha256\": \"$zeros\"/" envs/mlenv.lock
if "$mlenvc" check envs/team.mlenv 2> edited.err; then fail "check used an edited lock"; fi
grep -q 'error\[E0222\]' edited.err || { cat edited.err; fail "no E0222 for an edited lock"; }
if (cd envs && "$mlenvc" get > /dev/null 2> ../edited_get.err); then
  fail "get rewrote a pinned hash"
fi
golden edited_lock.expected edited_get.err
grep -q "$zeros" envs/mlenv.lock || fail "get changed the edited lock"
cp lock.good envs/mlenv.lock
"$mlenvc" check envs/team.mlenv || fail "check after the lock was restored"

# v1 -> v2: the researcher moves the tag, get pins it, and the plan shows what changed.
sed -i 's/?ref=v1/?ref=v2/' envs/team.mlenv
if "$mlenvc" check envs/team.mlenv 2> stale.err; then fail "check passed with an unlocked ref"; fi
grep -q 'error\[E0221\]' stale.err || fail "no E0221 for the new ref"
(cd envs && "$mlenvc" get > ../get2.out) || fail "get v2"
grep -q "?ref=v2  $(echo "$v2" | cut -c1-12)  2 files  (new)" get2.out || { cat get2.out; fail "v2 not new"; }
grep -q "?ref=v1  removed" get2.out || fail "v1 not removed from the lock"
[ -z "$(ls envs/.mlenv/git/*/ | grep "$v1")" ] || fail "the v1 cache stayed"
git commit -qam v2
"$mlenvc" plan envs/team.mlenv > plan2.out || fail "plan v2"
grep -q '~ barcelona/ml-dev-pod/Dockerfile' plan2.out || { cat plan2.out; fail "the plan does not show the image change"; }
grep -q '^      + *ffmpeg' plan2.out || { cat plan2.out; fail "the plan does not show v2's added package"; }

# A branch moves by design: get keeps the locked commit, --update moves it, and plan --check
# fails on the lock change alone.
sed -i "s|common/images?ref=v2|common/images?ref=main|" envs/team.mlenv
(cd envs && "$mlenvc" get > /dev/null) || fail "get main"
git commit -qam main && "$mlenvc" plan envs/team.mlenv > /dev/null || fail "plan main"
cd "$tmp/profiles"
sed -i 's/"ffmpeg"\]/"ffmpeg", "htop"]/' common/images.mlenv && git commit -qam v3
cd "$tmp/consumer"
(cd envs && "$mlenvc" get > /dev/null) || fail "get with a moved branch"
git diff --quiet envs/mlenv.lock || fail "get without --update moved a branch"
(cd envs && "$mlenvc" get --update "git::$url?ref=main" > ../update.out) || fail "get --update"
grep -q "?ref=main  .*(was $(echo "$v2" | cut -c1-12))" update.out || { cat update.out; fail "update not reported"; }
git commit -qam "update main"
if (cd envs && "$mlenvc" get --update git::file:///nowhere > /dev/null 2> ../unknown.err); then
  fail "--update of a source no file imports"
fi
grep -q 'names no git source of these files' unknown.err || fail "--update of an unknown source"
if "$mlenvc" plan envs/team.mlenv --check > /dev/null 2> check.err; then fail "--check passed after the lock changed"; fi
grep -q 'error\[E0606\]' check.err || fail "no E0606 after the lock changed"

# A tag that moved is detected by the lock; check still reads the locked commit offline.
cd "$tmp/profiles" && git tag -f v2 HEAD > /dev/null && cd "$tmp/consumer"
cp envs/mlenv.lock lock.before
if (cd envs && "$mlenvc" get > /dev/null 2> ../moved.err); then fail "get followed a moved tag"; fi
golden moved_tag.expected moved.err
cmp -s lock.before envs/mlenv.lock || fail "a failed get changed the lock"
"$mlenvc" check envs/team.mlenv || fail "check after the tag moved"

# What a git import may not reach, and what get cannot fetch.
cd "$tmp/profiles"
mkdir -p bad
printf 'import "../../outside"\n' > bad/escape.mlenv
ln -s ../site/barcelona.mlenv bad/link.mlenv
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 12\n' "$v1$v1" > bad/lfs.mlenv
git add -A
git update-index --add --cacheinfo "160000,$v1,bad/sub"
git commit -qm bad && git tag bad
mkdir -p "$tmp/consumer/bad" && cd "$tmp/consumer/bad"
printf '*.mlenv\n' > .gitignore && git add .gitignore && git commit -qm 'bad imports'
for name in escape link lfs sub/x; do
  printf 'import "git::%s//bad/%s?ref=bad" as b\n' "$url" "$name" > "$(echo "$name" | tr / _).mlenv"
done
printf 'import "git::%s//site/barcelona?ref=no-such-tag" as c\n' "$url" > unknown_ref.mlenv
printf 'import "git::file://%s/nowhere//site/barcelona?ref=v1" as d\n' "$tmp" > unreachable.mlenv
if "$mlenvc" get > /dev/null 2> escapes.err; then fail "get accepted what a git import may not reach"; fi
golden escapes.expected escapes.err
[ ! -e mlenv.lock ] || fail "a failed get wrote a lock"
[ -z "$(git status --porcelain .)" ] || { git status --porcelain .; fail "the failed get's mirrors are not ignored"; }
echo "git imports: ok"
