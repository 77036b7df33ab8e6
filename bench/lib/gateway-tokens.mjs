// Token counts of a tool listing with real BPE tokenizers (js-tiktoken ships its rank files in the
// npm package, so this works offline): o200k_base (GPT-4o and later) and cl100k_base (GPT-4).
import { Tiktoken } from 'js-tiktoken/lite';

const ENCODINGS = ['o200k_base', 'cl100k_base'];
let encoders;

async function load() {
  if (!encoders) {
    encoders = {};
    for (const name of ENCODINGS) {
      const { default: ranks } = await import(`js-tiktoken/ranks/${name}`);
      encoders[name] = new Tiktoken(ranks);
    }
  }
  return encoders;
}

export const TOKENIZER_NAMES = ENCODINGS;

/** { bytes, chars, o200k_base, cl100k_base } of a JSON text. */
export async function measureText(text) {
  const enc = await load();
  const counts = { bytes: Buffer.byteLength(text), chars: text.length };
  for (const name of ENCODINGS) counts[name] = enc[name].encode(text).length;
  return counts;
}

/**
 * What a client typically sends a model for each tool: name, description and input schema (title,
 * annotations and _meta stay with the client).
 */
export function modelView(tools) {
  return tools.map((tool) => ({ name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), input_schema: tool.inputSchema }));
}
