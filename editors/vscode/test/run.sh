#!/bin/sh
# ctest's editors.vscode: installs the pinned npm packages (npm ci, package-lock.json) into a
# copy of the extension under WORK_DIR (kept between runs, reinstalled when the lock file
# changes), tokenizes every .mlenv file of ROOT with the grammar, then packages the extension
# with vsce and checks what the package holds. Skipped (77) only where node or npm is absent.
# Usage: run.sh ROOT WORK_DIR
set -eu
root=$1 work=$2
command -v node >/dev/null && command -v npm >/dev/null || { echo "npm not installed: skipped"; exit 77; }
src="$root/editors/vscode"
mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/extension.js" "$src/README.md" \
  "$src/language-configuration.json" "$src/.vscodeignore" "$work/"
rm -rf "$work/syntaxes" "$work/test" && cp -r "$src/syntaxes" "$src/test" "$work/"
cd "$work"
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.lock-installed; then
  npm ci --no-audit --no-fund
  cp package-lock.json node_modules/.lock-installed
fi
node test/grammar_test.js "$root"
rm -f mlenv.vsix
npx --no-install vsce package --skip-license -o mlenv.vsix >vsce.log 2>&1 || { cat vsce.log; exit 1; }
contents=$(unzip -l mlenv.vsix)
for file in extension/package.json extension/extension.js extension/language-configuration.json \
    extension/syntaxes/mlenv.tmLanguage.json extension/node_modules/vscode-languageclient/node.js; do
  echo "$contents" | grep -q " $file\$" || { echo "mlenv.vsix lacks $file"; exit 1; }
done
if echo "$contents" | grep -q ' extension/test/'; then echo "mlenv.vsix holds the tests"; exit 1; fi
echo "mlenv.vsix: $(echo "$contents" | tail -1)"
