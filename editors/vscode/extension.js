// The agent-presets language server for VS Code: starts `agent-presets lsp` on every
// YAML file (the server stays quiet on YAML that is not a preset) and restarts it when
// the settings change.
"use strict";
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function start() {
  const config = vscode.workspace.getConfiguration("agentPresets");
  const command = config.get("path") || "agent-presets";
  const args = [...(config.get("args") || []), "lsp"];
  client = new LanguageClient(
    "agentPresets",
    "agent-presets",
    { command, args },
    { documentSelector: [{ scheme: "file", language: "yaml" }] }
  );
  return client.start().catch((err) => {
    vscode.window.showErrorMessage(
      `agent-presets: could not start \`${command} lsp\` (${err.message}); set "agentPresets.path" to the binary`
    );
  });
}

function activate(context) {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("agentPresets")) {
        if (client) await client.stop();
        await start();
      }
    })
  );
  return start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
