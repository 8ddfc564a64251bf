// Turns a server result into what the model receives. No `vscode` import: the tool passes in the part
// constructors of the running VS Code, the unit tests pass in plain ones.

import type { ImageContent, ReadResult } from './protocol';

/** Makes the parts of one tool result. `image` is absent when the running VS Code cannot pass images. */
export interface PartFactory<T> {
  text(value: string): T;
  image?(data: Uint8Array, mimeType: string): T;
}

/** A one-line stand-in for an image in text: the same words the CLI prints. */
export function imageNote(image: ImageContent): string {
  return `[image: ${image.mimeType} ${image.width}x${image.height}, attached]`;
}

/** What the model is told instead of an image it cannot be shown. */
export function imageNotAttachedNote(image: ImageContent): string {
  return (
    `[image: ${image.mimeType} ${image.width}x${image.height}, not attached: ` +
    'this version of VS Code cannot pass images to the model]'
  );
}

export function decodeBase64(data: string): Uint8Array {
  const buffer = Buffer.from(data, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** The parts of the tool result, in the server's order. An error result is its text: the model reads it. */
export function toParts<T>(result: Pick<ReadResult, 'content' | 'isError' | 'error'>, factory: PartFactory<T>): T[] {
  const parts: T[] = [];
  for (const content of result.content ?? []) {
    if (content.type === 'text') {
      parts.push(factory.text(content.text));
    } else if (content.type === 'image') {
      parts.push(
        factory.image
          ? factory.image(decodeBase64(content.data), content.mimeType)
          : factory.text(imageNotAttachedNote(content)),
      );
    }
  }
  if (parts.length === 0) {
    parts.push(factory.text(result.isError ? `Error: ${result.error?.message ?? 'the read failed'}` : ''));
  }
  return parts;
}

/**
 * The text the model reads, as one string: its text parts as the chat joins them, with nothing between them
 * (the server ends and starts a line around each image). The server's text already names each image where it
 * occurs; a result made of images alone gets a one-line note per image.
 */
export function agentText(result: Pick<ReadResult, 'content'>): string {
  const content = result.content ?? [];
  const texts = content.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text);
  return texts.length > 0 ? texts.join('') : images(result).map(imageNote).join('\n');
}

/** The images of a result, for showing them next to the text. */
export function images(result: Pick<ReadResult, 'content'>): ImageContent[] {
  return (result.content ?? []).filter((content): content is ImageContent => content.type === 'image');
}

/**
 * What the text says of each image of a result, in order: the last line of the text just before it, when that
 * line is a bracketed note ("[Page 3 as a picture, 1415x2000:]"); else undefined.
 */
export function imageCaptions(result: Pick<ReadResult, 'content'>): Array<string | undefined> {
  const captions: Array<string | undefined> = [];
  let before: string | undefined;
  for (const content of result.content ?? []) {
    if (content.type === 'text') {
      before = content.text.trimEnd().split('\n').at(-1);
    } else if (content.type === 'image') {
      captions.push(before?.startsWith('[') ? before.replace(/^\[|:?\]$/g, '') : undefined);
      before = undefined;
    }
  }
  return captions;
}

/** Total size of what the model receives: UTF-8 bytes of text plus decoded image bytes. */
export function resultSize(result: Pick<ReadResult, 'content'>): number {
  let size = 0;
  for (const content of result.content ?? []) {
    size +=
      content.type === 'text'
        ? Buffer.byteLength(content.text, 'utf8')
        : Math.floor((content.data.length * 3) / 4);
  }
  return size;
}

/** JSON-RPC's code for a malformed request. */
const INVALID_PARAMS = -32602;

/**
 * The text the model reads when the request itself failed (not a file problem, which is a normal error
 * result): malformed arguments, or a server that stopped mid-read.
 */
export function failureText(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === INVALID_PARAMS) {
    return `Error: invalid arguments: ${message}. Call the tool again with corrected arguments.`;
  }
  return (
    `Error: the agentread server could not complete the read (${message}). ` +
    'It is restarted automatically; call the tool again.'
  );
}

/** A size for people: "812 B", "14.2 KB", "3.1 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)} KB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
