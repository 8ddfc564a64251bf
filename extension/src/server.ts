// Starts the Python server with vscode-languageclient over stdio and keeps it running. There is one restart
// path, `restart(reason)`: the restart command, settings changes, interpreter changes and a server that died
// all go through it.

import { spawn, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { initializationOptions, serverArgs, serverEnv } from './launch';
import type { SendRequest } from './protocol';
import { findInterpreter, NoPythonError, type Interpreter } from './python';
import { readSettings } from './settings';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

/** A server that dies more often than this within CRASH_WINDOW_MS is left stopped until the next read. */
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 3 * 60_000;

/** How long a stopping server gets to shut down cleanly before it is killed. */
const STOP_TIMEOUT_MS = 2_000;

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private process: ChildProcess | undefined;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private crashes: number[] = [];
  private disposed = false;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();

  readonly onDidChangeState = this.stateEmitter.event;
  state: ServerState = 'stopped';
  /** Why the server is not running, when it is not. */
  problem: string | undefined;
  interpreter: Interpreter | undefined;

  constructor(
    private readonly extensionRoot: string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The process id of the running server (for the status bar tooltip and the tests). */
  get pid(): number | undefined {
    return this.process?.exitCode === null ? this.process.pid : undefined;
  }

  /**
   * Stops the server if it runs and starts a new one with the current settings. Calls that arrive while a
   * restart waits to begin share it; one that arrives while a restart is under way queues one more, since
   * the settings it was made for may be newer than the ones being applied.
   */
  restart(reason: string): Promise<void> {
    if (this.disposed) {
      return Promise.resolve();
    }
    if (this.queued) {
      return this.queued;
    }
    const next = this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.start(reason);
      });
    this.queued = next;
    this.running = next;
    return next;
  }

  /** Sends a request, first starting the server again if it is not running. */
  readonly send: SendRequest = async (method, params, token) => {
    const client = await this.ready();
    // Without a token the three-argument form would send [params, undefined] as the params.
    return token === undefined
      ? client.sendRequest(method, params)
      : client.sendRequest(method, params, token as vscode.CancellationToken);
  };

  /** Sends a notification if the server runs; one that is down learns the state again when it starts. */
  notify(method: string, params: unknown): void {
    if (this.client?.state === State.Running) {
      void this.client.sendNotification(method, params).catch((error: Error) => {
        this.log.warn(`${method}: ${error.message}`);
      });
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.running.catch(() => undefined);
    await this.stop();
  }

  private async ready(): Promise<LanguageClient> {
    await this.running.catch(() => undefined); // a start under way is waited for, not doubled
    if (!this.client || this.client.state !== State.Running) {
      await this.restart('a read arrived while the server was not running');
    }
    if (!this.client || this.client.state !== State.Running) {
      throw new Error(this.problem ?? 'the agentread server is not running');
    }
    return this.client;
  }

  private setState(state: ServerState, problem?: string): void {
    this.state = state;
    this.problem = problem;
    this.stateEmitter.fire(state);
  }

  private async start(reason: string): Promise<void> {
    this.log.info(`Starting the server (${reason}).`);
    await this.stop();
    this.setState('starting');
    const settings = readSettings();
    let interpreter: Interpreter;
    try {
      interpreter = await findInterpreter(settings.python, this.extensionRoot);
    } catch (error) {
      const message = (error as Error).message;
      this.log.error(message);
      this.setState('failed', message);
      if (error instanceof NoPythonError) {
        void vscode.window.showErrorMessage(message, 'Open Settings').then((choice) => {
          if (choice) {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'agentread.python');
          }
        });
      }
      return;
    }
    this.interpreter = interpreter;
    const [major, minor] = interpreter.probe.version;
    this.log.info(`Python ${major}.${minor} at ${interpreter.probe.executable} (from ${interpreter.source}).`);

    const serverOptions: ServerOptions = async () => {
      const child = spawn(interpreter.command, serverArgs(), {
        cwd: this.extensionRoot,
        env: serverEnv(this.extensionRoot, interpreter.probe.version),
        stdio: 'pipe',
      });
      child.on('exit', (code, signal) => this.log.info(`Server process ${child.pid} exited (${signal ?? code}).`));
      this.process = child;
      return child;
    };
    const clientOptions: LanguageClientOptions = {
      // Open text documents are synchronised, so a read of an open file returns its unsaved contents.
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: initializationOptions(settings),
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      connectionOptions: { maxRestartCount: 0 },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          this.onClosed(client);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient('agentread', 'agentread', serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      const message = `The agentread server did not start: ${(error as Error).message}`;
      this.log.error(message);
      if (this.client === client) {
        this.client = undefined;
      }
      this.setState('failed', message);
      return;
    }
    this.log.info(`Server running (process ${this.process?.pid}).`);
    this.setState('running');
  }

  /** A server that exits on its own is started again through the one restart path. */
  private onClosed(client: LanguageClient): void {
    if (client !== this.client) {
      return; // stopped on purpose
    }
    this.client = undefined;
    const now = Date.now();
    this.crashes = [...this.crashes.filter((time) => now - time < CRASH_WINDOW_MS), now];
    if (this.crashes.length > MAX_CRASHES) {
      const message = `The agentread server stopped ${this.crashes.length} times in a few minutes; it starts again on the next read. See the agentread log.`;
      this.log.error(message);
      this.setState('failed', message);
      return;
    }
    this.log.warn('The server stopped unexpectedly; starting it again.');
    this.setState('stopped', 'the server stopped unexpectedly');
    void this.restart('the server stopped unexpectedly');
  }

  private async stop(): Promise<void> {
    const client = this.client;
    const child = this.process;
    this.client = undefined;
    this.process = undefined;
    if (client) {
      try {
        if (client.state !== State.Stopped) {
          await client.stop(STOP_TIMEOUT_MS);
        }
      } catch (error) {
        this.log.warn(`Stopping the server: ${(error as Error).message}`);
      }
    }
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill();
    }
    this.setState('stopped');
  }
}
