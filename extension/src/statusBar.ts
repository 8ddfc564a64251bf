// The status bar item: whether the server runs; a click shows the log, or restarts a server that is down.

import * as vscode from 'vscode';
import type { ServerManager, ServerState } from './server';

const LOOK: Record<ServerState, { text: string; tooltip: string; command: string }> = {
  starting: { text: '$(sync~spin) agentread', tooltip: 'agentread: starting the server', command: 'agentread.showLog' },
  running: { text: '$(book) agentread', tooltip: 'agentread: server running', command: 'agentread.showLog' },
  stopped: { text: '$(debug-stop) agentread', tooltip: 'agentread: server stopped', command: 'agentread.restartServer' },
  failed: { text: '$(error) agentread', tooltip: 'agentread: server not running', command: 'agentread.restartServer' },
};

export function createStatusBar(server: ServerManager): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('agentread.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'agentread';
  const update = () => {
    const look = LOOK[server.state];
    item.text = look.text;
    const details = [look.tooltip];
    if (server.state === 'running' && server.interpreter) {
      const [major, minor] = server.interpreter.probe.version;
      details.push(`Python ${major}.${minor}: ${server.interpreter.probe.executable}`);
    }
    if (server.problem) {
      details.push(server.problem);
    }
    details.push(look.command === 'agentread.restartServer' ? 'Click to restart it.' : 'Click to show the log.');
    item.tooltip = details.join('\n');
    item.command = look.command;
    item.backgroundColor =
      server.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  };
  update();
  item.show();
  const listener = server.onDidChangeState(update);
  return vscode.Disposable.from(item, listener);
}
