#!/usr/bin/env bash
# Sources are read only from the program's repository and MLENV_PATH (issue #21 item 6): a pull
# request adding `helper.mlenv -> ../outside/creds` printed the token's line in the excerpt of
# the parse error. Each case's output is compared with EXPECTED (MLENV_UPDATE_GOLDENS=1 rewrites
# it), and no output may hold the secret. Outside a git work tree, the root file's folder is
# the program's.
# usage: outside_sources.sh MLENVC EXPECTED
set -u
mlenvc=$(realpath "$1") expected=$(realpath "$2")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/repo/lib" "$dir/outside" "$dir/site" "$dir/loose/sub"
echo 'SECRET_TOKEN_abc123 = "x"' >"$dir/outside/creds"
echo 'SECRET_TOKEN_abc123 = "x"' >"$dir/outside/creds.mlenv"
image='image i {
  from = "b:1"
  tag = "t"
}'
echo "$image" >"$dir/site/shared.mlenv"
echo "$image" >"$dir/repo/lib/inner.mlenv"
cd "$dir/repo" && git init -q . || exit 2
ln -s ../outside/creds helper.mlenv
ln -s ../outside/creds.mlenv root_link.mlenv
ln -s lib/inner.mlenv same_repo.mlenv
ln -s ../outside linked_dir
git config remote.origin.url https://user:SECRET_TOKEN_abc123@example.com/r.git
ln -s .git/config git_config.mlenv
printf 'import "./helper"\n%s\n' "$image" >main.mlenv
printf 'import "./linked_dir/creds"\n%s\n' "$image" >via_dir.mlenv
printf 'import "%s/outside/creds"\n%s\n' "$dir" "$image" >absolute.mlenv
printf 'import "./same_repo" as same\n' >inside.mlenv
printf 'import "shared"\n' >site.mlenv
printf 'import "../creds"\n%s\n' "$image" >"$dir/loose/sub/x.mlenv"
echo 'SECRET_TOKEN_abc123 = "x"' >"$dir/loose/creds.mlenv"

out=$(mktemp)
run() {
  echo "\$ mlenvc $*"
  NO_COLOR=1 "$mlenvc" "$@" 2>&1
  echo "exit: $?"
}
{
  run check main.mlenv
  run check via_dir.mlenv
  run check absolute.mlenv | head -1  # the excerpt's width depends on the temporary path
  run check root_link.mlenv
  run fmt --check helper.mlenv
  run check git_config.mlenv
  run check inside.mlenv
  MLENV_PATH=$dir/site run check site.mlenv
  cd "$dir/loose/sub" && run check x.mlenv
} | sed "s|$dir|TMP|g" >"$out"
status=0
if grep -q SECRET_TOKEN "$out"; then
  echo "the secret was printed:"; grep SECRET_TOKEN "$out"; status=1
fi
if [ "${MLENV_UPDATE_GOLDENS:-}" = 1 ]; then
  cp "$out" "$expected"; echo "updated $expected"
elif ! diff -u "$expected" "$out"; then
  echo "golden mismatch: $expected (MLENV_UPDATE_GOLDENS=1 to update)"; status=1
fi
rm -f "$out"
exit $status
