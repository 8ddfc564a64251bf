// How much text one reply of the tools may hold: the most the chat passes on to the model as it is. No `vscode`
// import: the tool reads the settings and the invocation's token budget, the unit tests pass plain values.

/** What bounds a reply, as the tool finds it at each call. */
export interface ReplyBounds {
  /** `agentread.maxReplyBytes`; 0 or absent: chosen from what the host says. */
  setting?: number;
  /** The size of a tool result's text past which the chat agent writes it to a file instead of passing it on. */
  hostThreshold?: number;
  /** The invocation's `tokenizationOptions.tokenBudget`: what the model's context has room for. */
  tokenBudget?: number;
}

/**
 * Bytes of reply text allowed per token of a token budget. Numbered source lines run 3-4 bytes a token, and
 * the tool counts the reply's tokens afterwards, asking again for less in the rare case this was too many.
 */
export const BYTES_PER_TOKEN = 3;

/** A reply asked for again after it counted too many tokens aims this far under the budget. */
const TOKEN_AIM = 0.9;

function positive(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** The reply's text limit in bytes (the server's `maxBytes`), or undefined for the server's own. */
export function replyBytes(bounds: ReplyBounds): number | undefined {
  if (positive(bounds.setting)) {
    return Math.floor(bounds.setting);
  }
  const tokens = positive(bounds.tokenBudget) ? bounds.tokenBudget * BYTES_PER_TOKEN : undefined;
  const limits = [bounds.hostThreshold, tokens].filter(positive);
  return limits.length > 0 ? Math.floor(Math.min(...limits)) : undefined;
}

/** The limit to ask again with after a reply of `bytes` bytes counted `tokens` tokens against `budget`. */
export function shrunkForTokens(bytes: number, tokens: number, budget: number): number {
  return Math.max(1, Math.floor((bytes * budget * TOKEN_AIM) / tokens));
}

/** UTF-8 bytes of a reply's text parts: what `maxBytes` bounds. */
export function textBytes(content: ReadonlyArray<{ type: string; text?: string }>): number {
  return content.reduce((sum, part) => sum + (part.type === 'text' ? Buffer.byteLength(part.text ?? '', 'utf8') : 0), 0);
}
