import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorMessage, ToolError } from '@bulkhead/core';
import type { WebSearchPolicy } from '../../policy.js';

/** What a header value may hold: a key with a line break or a space in it is a misconfiguration. */
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The API key, read on every call so a rotated key needs no restart: from the environment variable
 * search.api_key_env, else from search.api_key_file (relative to the control-plane folder). No
 * message here ever contains the key or any part of the file.
 */
export function readApiKey(policy: WebSearchPolicy, controlDir: string, label: string): string {
  const fromEnv = process.env[policy.api_key_env]?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return checked(fromEnv, `the environment variable ${policy.api_key_env}`);
  if (policy.api_key_file === undefined) {
    throw new ToolError(`${label} needs an API key: set the environment variable ${policy.api_key_env} or search.api_key_file in web_policy.yaml`, 'missing_api_key');
  }
  const file = resolve(controlDir, policy.api_key_file);
  const key = readKeyFile(file).trim();
  if (key === '') throw new ToolError(`${label} needs an API key: ${file} (search.api_key_file) is empty and ${policy.api_key_env} is not set`, 'missing_api_key');
  return checked(key, file);
}

function readKeyFile(file: string): string {
  try {
    // Other users could read the key too: refused the way ssh refuses such a private key.
    const mode = statSync(file).mode & 0o777;
    if (process.platform !== 'win32' && (mode & 0o044) !== 0) {
      throw new ToolError(`${file} (search.api_key_file) is readable by other users (mode ${mode.toString(8)}): chmod 600 it`, 'unsafe_api_key_file');
    }
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(`the API key file ${file} (search.api_key_file) cannot be read: ${errorMessage(error)}`, 'missing_api_key');
  }
}

function checked(key: string, source: string): string {
  if (!KEY_PATTERN.test(key)) throw new ToolError(`the API key in ${source} holds spaces or control characters; a key is one printable word`, 'bad_api_key');
  return key;
}
