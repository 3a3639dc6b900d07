import { hermesToolCalls } from './hermes-tool-calls.js';
import { llama3JsonToolCalls } from './llama3-tool-calls.js';
import type { ModelTokenizer } from './model-tokenizer.js';
import type { ToolCallFormat } from './tool-call-format.js';

/** A chat template no registered format recognises: the model's tool calls could not be read. */
export class UnknownToolCallFormatError extends Error {
  override readonly name = 'UnknownToolCallFormatError';
  constructor(readonly source: string) {
    super(
      `no tool-call format recognises the chat template of ${source} (known: ${formats.map((format) => format.family).join(', ')}); ` +
        'register one with registerToolCallFormat (docs/tool-calls.md)',
    );
  }
}

/** Registered formats, asked in order; a user's come before the built-ins, so one can refine a built-in's detection. */
const formats: ToolCallFormat[] = [hermesToolCalls, llama3JsonToolCalls];

/**
 * Adds a model family's format. It is asked before every format registered earlier, the built-ins included.
 * Registering a family already registered replaces it. Returns a function that takes it out again (and puts back
 * the format it replaced).
 */
export function registerToolCallFormat(format: ToolCallFormat): () => void {
  const known = formats.findIndex((registered) => registered.family === format.family);
  const replaced = known >= 0 ? formats.splice(known, 1)[0] : undefined;
  formats.unshift(format);
  return () => {
    const at = formats.indexOf(format);
    if (at < 0) return;
    formats.splice(at, 1);
    if (replaced) formats.splice(known, 0, replaced);
  };
}

/** The registered formats, in the order they are asked. */
export function registeredToolCallFormats(): readonly ToolCallFormat[] {
  return [...formats];
}

/** The format whose `detect` recognises a chat template (the first that does). Throws UnknownToolCallFormatError. */
export function toolCallFormatForTemplate(chatTemplate: string, source = 'this template'): ToolCallFormat {
  const format = formats.find((candidate) => candidate.detect(chatTemplate));
  if (!format) throw new UnknownToolCallFormatError(source);
  return format;
}

/** The tool-call format of a model, from its tokenizer's chat template. Throws UnknownToolCallFormatError. */
export function toolCallFormatOf(tokenizer: ModelTokenizer): ToolCallFormat {
  return toolCallFormatForTemplate(tokenizer.chatTemplate, tokenizer.directory);
}
