// The scripted language models of the chat end-to-end suite. The runner writes scenarios.json in the directory
// AGENTREAD_CHAT_DIR names; a user prompt "scenario:<name>" plays that scenario: the first turn calls the
// scenario's tool with its input, the next one writes everything the model received to recordings/<name>.json
// and answers a short text; a chat may play several scenarios, one prompt after the other. Two test-only tools measure the chat itself: agentreadtest_probe records the
// tokenizationOptions a tool's invoke gets, agentreadtest_parts returns text parts of given sizes and an image.
// Plain JavaScript, so that the suite needs no build step of its own.

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const VENDOR = 'agentread-test';
/**
 * A scenario whose tool result never shows in the messages (the chat dropped it) would call the tool again
 * and again; at this many calls the model records what it got and stops.
 */
const MAX_CALLS = 3;
/** Tool calls made so far, by scenario. */
const calls = new Map();
const dir = process.env.AGENTREAD_CHAT_DIR || '';

function readPlan() {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'scenarios.json'), 'utf8'));
  } catch {
    return { models: [], scenarios: {} };
  }
}

/** Writes `value` as JSON atomically, so that the runner never reads half a file. */
function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  fs.writeFileSync(partial, JSON.stringify(value, null, 1));
  fs.renameSync(partial, file);
}

/** One line per request the model got, for finding out what happened when a scenario did not record. */
function log(entry) {
  try {
    fs.mkdirSync(dir, { recursive: true });
    const line = JSON.stringify({ at: new Date().toISOString(), ...entry });
    fs.appendFileSync(path.join(dir, 'model-requests.jsonl'), line + '\n');
  } catch {
    // the log is only a diagnostic
  }
}

function roleName(role) {
  const roles = vscode.LanguageModelChatMessageRole;
  return Object.keys(roles).find((name) => roles[name] === role) ?? String(role);
}

/** A message part as plain JSON: text in full, data as its type and size, tool results with their content. */
function describePart(part) {
  if (part instanceof vscode.LanguageModelTextPart) {
    return { type: 'text', text: part.value };
  }
  if (vscode.LanguageModelDataPart && part instanceof vscode.LanguageModelDataPart) {
    const described = { type: 'data', mimeType: part.mimeType, bytes: part.data?.byteLength ?? 0 };
    if (!part.mimeType.startsWith('image/') && described.bytes < 4096) {
      described.text = Buffer.from(part.data).toString('utf8');
    }
    return described;
  }
  if (part instanceof vscode.LanguageModelToolResultPart) {
    return { type: 'toolResult', callId: part.callId, content: (part.content ?? []).map(describePart) };
  }
  if (part instanceof vscode.LanguageModelToolCallPart) {
    return { type: 'toolCall', callId: part.callId, name: part.name, input: part.input };
  }
  if (vscode.LanguageModelPromptTsxPart && part instanceof vscode.LanguageModelPromptTsxPart) {
    return { type: 'promptTsx', json: JSON.stringify(part.value) };
  }
  // Parts of classes this VS Code has and the checks above do not know (thinking, ...): their own fields.
  const fields = {};
  for (const [key, value] of Object.entries(part ?? {})) {
    fields[key] = value instanceof Uint8Array ? `<${value.byteLength} bytes>` : value;
  }
  return { type: 'other', constructor: part?.constructor?.name, fields };
}

function describeMessages(messages) {
  return messages.map((message) => ({
    role: roleName(message.role),
    name: message.name,
    content: (message.content ?? []).map(describePart),
  }));
}

function describeOptions(options) {
  return {
    toolMode: options.toolMode,
    modelOptions: options.modelOptions,
    tools: (options.tools ?? []).map((tool) =>
      tool.name.startsWith('agentread')
        ? { name: tool.name, description: tool.description, inputSchema: tool.inputSchema }
        : { name: tool.name },
    ),
  };
}

/** The text of the user's messages: the agent wraps the prompt in its own markup, so search all of it. */
function userText(messages) {
  const texts = [];
  for (const message of messages) {
    if (message.role === vscode.LanguageModelChatMessageRole.User) {
      for (const part of message.content ?? []) {
        if (part instanceof vscode.LanguageModelTextPart) {
          texts.push(part.value);
        }
      }
    }
  }
  return texts.join('\n');
}

/**
 * Whether the turn of the last scenario prompt holds a tool result: a chat that played other scenarios before
 * holds theirs too, before that prompt.
 */
function hasToolResult(messages) {
  const isPrompt = (message) =>
    message.role === vscode.LanguageModelChatMessageRole.User &&
    (message.content ?? []).some((part) => part instanceof vscode.LanguageModelTextPart && part.value.includes('scenario:'));
  const prompt = messages.findLastIndex(isPrompt);
  return messages.slice(prompt + 1).some((message) =>
    (message.content ?? []).some((part) => part instanceof vscode.LanguageModelToolResultPart),
  );
}

const provider = {
  provideLanguageModelChatInformation() {
    return readPlan().models.map((model) => ({
      id: model.id,
      name: model.name,
      family: model.id,
      version: '1',
      tooltip: model.name,
      detail: 'scripted',
      maxInputTokens: model.maxInputTokens,
      maxOutputTokens: model.maxOutputTokens ?? 4096,
      capabilities: { imageInput: model.imageInput, toolCalling: true },
    }));
  },

  async provideLanguageModelChatResponse(model, messages, options, progress) {
    const plan = readPlan();
    const matches = [...userText(messages).matchAll(/scenario:([a-z0-9-]+)/g)];
    const name = matches.length ? matches[matches.length - 1][1] : undefined;
    const scenario = name ? plan.scenarios[name] : undefined;
    const offered = (options.tools ?? []).map((tool) => tool.name);
    const entry = { model: model.id, scenario: name, messages: messages.length, tools: offered.length };
    if (!scenario || !offered.includes(scenario.tool)) {
      // Not a turn of the agent (a title, a summary, a prompt without a scenario): a plain answer.
      log({ ...entry, answer: 'plain' });
      progress.report(new vscode.LanguageModelTextPart('Scripted reply.'));
      return;
    }
    const made = calls.get(name) ?? 0;
    if (!hasToolResult(messages) && made < MAX_CALLS) {
      calls.set(name, made + 1);
      log({ ...entry, answer: 'tool call', tool: scenario.tool });
      const callId = `call_${name.replace(/-/g, '_')}_${Date.now()}`;
      progress.report(new vscode.LanguageModelToolCallPart(callId, scenario.tool, scenario.input));
      return;
    }
    const file = path.join(dir, 'recordings', `${name}.json`);
    if (fs.existsSync(file)) {
      log({ ...entry, answer: 'already recorded' });
    } else {
      log({ ...entry, answer: 'recorded' });
      const record = { scenario: name, model: model.id, toolCalls: made, options: describeOptions(options) };
      writeJson(file, { ...record, messages: describeMessages(messages) });
    }
    progress.report(new vscode.LanguageModelTextPart(`Scenario ${name}: recorded.`));
  },

  provideTokenCount(_model, text) {
    const value =
      typeof text === 'string'
        ? text
        : (text.content ?? []).map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
    return Math.ceil(value.length / 4);
  },
};

/** Records what the chat passes to a tool's invoke: the token budget the tool is given, if any. */
const probe = {
  async invoke(options) {
    const tokenization = options.tokenizationOptions;
    const sample = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const record = {
      hasTokenizationOptions: tokenization !== undefined,
      tokenBudget: tokenization?.tokenBudget,
      sampleChars: sample.length,
      sampleTokens: tokenization ? await tokenization.countTokens(sample) : undefined,
      optionKeys: Object.keys(options),
    };
    const name = typeof options.input?.scenario === 'string' ? options.input.scenario : 'probe';
    writeJson(path.join(dir, 'probes', `${name.replace(/[^a-z0-9-]/g, '')}.json`), record);
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`probe: ${JSON.stringify(record)}`)]);
  },
};

/** Text parts of the sizes asked for, each made of one letter after a header naming it, then the image asked for. */
const parts = {
  async invoke(options) {
    const sizes = Array.isArray(options.input?.textParts) ? options.input.textParts : [];
    const content = sizes.map((size, i) => {
      const header = `[part ${i + 1} of ${sizes.length}, ${size} chars]`;
      const letter = String.fromCharCode(97 + (i % 26));
      return new vscode.LanguageModelTextPart(header + letter.repeat(Math.max(0, size - header.length)));
    });
    if (typeof options.input?.imagePath === 'string') {
      content.push(vscode.LanguageModelDataPart.image(fs.readFileSync(options.input.imagePath), 'image/png'));
    }
    return new vscode.LanguageModelToolResult(content);
  },
};

function activate(context) {
  log({ event: 'activated', vscode: vscode.version, dir });
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider(VENDOR, provider));
  context.subscriptions.push(vscode.lm.registerTool('agentreadtest_probe', probe));
  context.subscriptions.push(vscode.lm.registerTool('agentreadtest_parts', parts));
}

module.exports = { activate };
