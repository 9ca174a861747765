// The VS Code client of `mlenvc lsp`: starts the server for .mlenv files and hands it the
// editor's documents and file changes. Everything a user sees comes from the server.
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const path = vscode.workspace.getConfiguration('mlenv').get('server.path') || 'mlenvc';
  const server = { command: path, args: ['lsp'] };
  client = new LanguageClient('mlenv', 'mlenv language server', server, {
    documentSelector: [{ scheme: 'file', language: 'mlenv' }],
    // Imports on disk change too (a deleted profile): the server checks open programs again.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.mlenv') },
  });
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
