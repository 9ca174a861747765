#!/bin/sh
# A real editor's client: Debian's neovim (0.7, its built-in LSP client) headless, set up with
# README.md's snippet (the first ```lua block), opens a program and writes down the diagnostics
# it received from `mlenvc lsp`; they must be those `mlenvc check --format=json` reports (code
# and line), and a clean example must receive an empty list. Skipped (77) where nvim is not
# installed; `./mlenv test` installs it.
# Usage: neovim_test.sh MLENVC SOURCE_DIR
set -eu
mlenvc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") source=$2
command -v nvim >/dev/null || { echo "nvim not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Barcelona with one more env holding two errors: a node count out of range, an unknown
# transport.
cp "$source/examples/barcelona.mlenv" "$dir/program.mlenv"
cat >>"$dir/program.mlenv" <<'MLENV'

env broken {
  cluster = barcelona
  image   = pytorch.pytorch29
  nodes   = 0
  network = tcpp  // é😀
}
MLENV
cp "$source/examples/barcelona.mlenv" "$dir/clean.mlenv"

# README's snippet, as a user would paste it.
sed -n '/^```lua$/,/^```$/p' "$source/README.md" | sed '1d;$d' | sed -n '1,/^})$/p' >"$dir/init.lua"
grep -q 'vim.lsp.start_client' "$dir/init.lua" || { echo "no neovim snippet in README.md"; exit 1; }
cat >>"$dir/init.lua" <<LUA

-- Marks a buffer whose diagnostics were published, an empty list too.
local handler = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
  handler(err, result, ctx, config)
  vim.b[vim.uri_to_bufnr(result.uri)].mlenv_published = true
end

local function report(path, out)
  vim.cmd('edit ' .. path)
  local buf = vim.api.nvim_get_current_buf()
  local got = vim.wait(20000, function() return vim.b[buf].mlenv_published == true end, 50)
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or '?'
    table.insert(lines, string.format('%s %d', code, d.lnum + 1))
  end
  table.sort(lines)
  local f = io.open(out, 'w')
  f:write(table.concat(lines, '\n') .. (#lines > 0 and '\n' or ''))
  f:close()
  return got
end

local ok = report('$dir/program.mlenv', '$dir/nvim.txt')
ok = report('$dir/clean.mlenv', '$dir/clean.txt') and ok
vim.cmd(ok and 'qall!' or 'cquit!')
LUA

cd "$dir"
mkdir bin && ln -s "$mlenvc" bin/mlenvc
if ! PATH="$dir/bin:$PATH" XDG_CACHE_HOME="$dir/cache" timeout 50 \
    nvim --headless --clean -u "$dir/init.lua" >"$dir/nvim.log" 2>&1; then
  echo "nvim failed or timed out:"; cat "$dir/nvim.log"; exit 1
fi
if "$mlenvc" check --format=json program.mlenv 2>"$dir/check.json"; then
  echo "program.mlenv checked clean"; exit 1
fi
sed 's/,"notes":.*//' "$dir/check.json" |
  sed -n 's/^{"code":"\([EW][0-9]*\)".*"range":{[^}]*"line":\([0-9]*\).*/\1 \2/p' |
  sort >"$dir/check.txt"
echo "neovim received:"; cat "$dir/nvim.txt"
echo "mlenvc check reports:"; cat "$dir/check.txt"
[ -s "$dir/check.txt" ] || { echo "no diagnostics from mlenvc check"; exit 1; }
cmp -s "$dir/nvim.txt" "$dir/check.txt" || { echo "they differ"; exit 1; }
[ ! -s "$dir/clean.txt" ] || { echo "the clean example received diagnostics"; exit 1; }
echo "ok"
