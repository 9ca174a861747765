// The TextMate grammar, tokenized by the tokenizer VS Code itself runs (vscode-textmate with
// the Oniguruma regular expressions of vscode-oniguruma), on every .mlenv file of the
// repository: every state the grammar enters is left by the end of the file, declarations,
// keys, comments and strings get their scopes, and no word is left without one.
// Usage: node test/grammar_test.js REPOSITORY_ROOT
'use strict';

const fs = require('fs');
const path = require('path');
const assert = require('assert');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..'));
const grammarPath = path.join(__dirname, '..', 'syntaxes', 'mlenv.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  const onigLib = oniguruma.loadWASM(wasm).then(() => ({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (text) => new oniguruma.OnigString(text),
  }));
  const registry = new vsctm.Registry({
    onigLib,
    loadGrammar: async (scope) =>
      scope === 'source.mlenv'
        ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath)
        : null,
  });
  return registry.loadGrammar('source.mlenv');
}

// Every line's tokens ({text, scopes}), and the rule stack after the last line.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const lines = text.split('\n').map((line) => {
    const result = grammar.tokenizeLine(line, stack);
    stack = result.ruleStack;
    return result.tokens.map((t) => ({
      text: line.substring(t.startIndex, t.endIndex),
      scopes: t.scopes,
    }));
  });
  return { lines, stack };
}

function has(token, scope) {
  return token.scopes.some((s) => s.startsWith(scope));
}

function files(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files(full, out);
    else if (entry.name.endsWith('.mlenv')) out.push(full);
  }
  return out;
}

// The token covering column `at` of a tokenized line.
function tokenAt(tokens, at) {
  let column = 0;
  for (const token of tokens) {
    if (at < column + token.text.length) return token;
    column += token.text.length;
  }
  return null;
}

function checkFile(grammar, file) {
  const text = fs.readFileSync(file, 'utf8');
  const { lines, stack } = tokenize(grammar, text);
  const name = path.relative(root, file);
  assert.strictEqual(stack.depth, 1, `${name}: a state is left open at its end`);
  const source = text.split('\n');
  let checks = 0;
  source.forEach((line, i) => {
    const tokens = lines[i];
    const where = `${name}:${i + 1}`;
    const decl = /^(cluster|image|env|storage|network)\s+([A-Za-z_][\w-]*)/.exec(line);
    if (decl) {
      assert(has(tokenAt(tokens, 0), 'storage.type.declaration'), `${where}: declaration kind`);
      const at = line.indexOf(decl[2], decl[1].length);
      assert(has(tokenAt(tokens, at), 'entity.name.type.declaration'), `${where}: declaration name`);
      checks += 2;
    }
    const comment = /^\s*\/\//.exec(line);
    if (comment) {
      assert(tokens.every((t) => !t.text.trim() || has(t, 'comment')), `${where}: comment`);
      checks++;
    }
    const key = /^(\s*)(final\s+)?([A-Za-z_][\w-]*)\s*(\+?=)/.exec(line);
    if (key && !comment && !decl) {
      const at = key[1].length + (key[2] || '').length;
      assert(has(tokenAt(tokens, at), 'variable.other.property'), `${where}: key \`${key[3]}\``);
      checks++;
    }
    for (const token of tokens) {
      if (token.text === '"' || token.text.startsWith('"'))
        assert(has(token, 'string') || has(token, 'comment') || has(token, 'variable.other.property'),
               `${where}: a quote outside a string`);
      // Every word gets a scope beyond the file's own.
      if (/[A-Za-z0-9]/.test(token.text))
        assert(token.scopes.length > 1, `${where}: \`${token.text}\` has no scope`);
    }
  });
  return checks;
}

// Exact scopes of the constructs the examples may not hold.
function checkSample(grammar) {
  const sample = [
    'import "std/images/pytorch" as pt  // the stdlib',
    '/// Documentation.',
    'image mine extends pt.pytorch29 {',
    '  final tag = "t-${pt.pytorch29.tag}\\n"',
    '  pip += ["x"]',
    '  run = [<<EOT',
    '    echo "not a string" { [',
    '    EOT',
    '  ]',
    '  "nvidia.com/gpu" = 4',
    '  size = 100Gi',
    '  wait = 1h30m',
    '  on = true',
    '  /* a block',
    '     comment */',
    '}',
  ];
  const { lines, stack } = tokenize(grammar, sample.join('\n'));
  assert.strictEqual(stack.depth, 1, 'sample: a state is left open');
  const scope = (line, text) => {
    const at = sample[line].indexOf(text);
    const token = tokenAt(lines[line], at);
    return token.scopes.join(' ');
  };
  const expect = [
    [0, 'import', 'keyword.control.import'],
    [0, '"std/', 'string.quoted.double'],
    [0, 'pt ', 'entity.name.namespace'],
    [0, '// the', 'comment.line.double-slash'],
    [1, '///', 'comment.line.documentation'],
    [2, 'image', 'storage.type.declaration'],
    [2, 'mine', 'entity.name.type.declaration'],
    [2, 'extends', 'storage.modifier.extends'],
    [2, 'pt.pytorch29', 'entity.other.inherited-class'],
    [3, 'final', 'storage.modifier.final'],
    [3, 'tag', 'variable.other.property'],
    [3, '${', 'punctuation.definition.interpolation.begin'],
    [3, 'pt.pytorch29.tag', 'variable.other.reference'],
    [3, '\\n', 'constant.character.escape'],
    [4, '+=', 'keyword.operator.assignment'],
    [6, 'echo', 'string.unquoted.heredoc'],
    [6, '"not', 'string.unquoted.heredoc'],
    [9, '"nvidia.com/gpu"', 'variable.other.property'],
    [10, '100Gi', 'constant.numeric'],
    [11, '1h30m', 'constant.numeric'],
    [12, 'true', 'constant.language.boolean'],
    [14, 'comment', 'comment.block'],
  ];
  for (const [line, text, want] of expect) {
    assert(scope(line, text).includes(want), `sample line ${line + 1} \`${text}\`: ${scope(line, text)}`);
  }
  return expect.length;
}

async function main() {
  const grammar = await loadGrammar();
  const all = [
    ...files(path.join(root, 'examples')),
    ...files(path.join(root, 'stdlib')),
    ...files(path.join(root, 'schema')),
  ];
  assert(all.length > 10, `too few .mlenv files under ${root}`);
  let checks = checkSample(grammar);
  for (const file of all) checks += checkFile(grammar, file);
  console.log(`grammar: ${all.length} files, ${checks} checks passed`);
}

main().catch((error) => {
  console.error(error.message || error);
  process.exit(1);
});
