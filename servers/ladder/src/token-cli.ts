import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '@bulkhead/core';
import { ladderDatabasePath, loadLadderPolicy } from './server.js';
import { LadderFile, LazyWorkQueueStore } from './store/ladder-file.js';

export const TOKEN_USAGE = `usage: bulkhead-ladder token create --actor NAME [--config DIR]
       bulkhead-ladder token list [--actor NAME] [--config DIR]
       bulkhead-ladder token revoke ID [--config DIR]

  --config DIR   the control-plane folder holding ladder_policy.yaml and the database (default: ./.bulkhead)
  --actor NAME   the principal the token acts as (create), or whose tokens to list`;

/** Thrown for a command line that cannot run; the CLI prints it with the usage. */
class TokenUsageError extends Error {}

/** Where the command writes: its result to `out` (stdout), everything said about it to `err` (stderr). */
export interface TokenOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/**
 * `bulkhead-ladder token …`: manages the bearer tokens of the HTTP tool endpoint in the ladder
 * database. A created token's secret is printed once, alone on stdout, so that
 * `TOKEN=$(bulkhead-ladder token create --actor ada)` captures exactly it: only its hash is stored.
 * Listing before any token exists makes no database file.
 */
export async function runTokenCommand(argv: readonly string[], cwd: string, { out, err }: TokenOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { actor: { type: 'string' }, config: { type: 'string' } } });
  } catch (error) {
    err(`${errorMessage(error)}\n\n${TOKEN_USAGE}\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  const controlDir = resolve(cwd, values.config ?? join(cwd, '.bulkhead'));
  const store = new LazyWorkQueueStore(new LadderFile(ladderDatabasePath(controlDir, loadLadderPolicy(controlDir))));
  try {
    const [command, ...rest] = positionals;
    switch (command) {
      case 'create': {
        if (values.actor === undefined || rest.length > 0) throw new TokenUsageError('token create takes --actor NAME and nothing else');
        const token = await store.createToken(values.actor);
        err(`bulkhead-ladder token: created token ${token.id} for ${token.actor}, printed on stdout this once (only its hash is kept); keep it secret\n`);
        out(`${token.secret}\n`);
        return 0;
      }
      case 'list': {
        if (rest.length > 0) throw new TokenUsageError('token list takes no ID');
        const tokens = await store.listTokens(values.actor);
        out(tokens.length === 0 ? 'no tokens\n' : tokens.map((token) => `${token.id} ${token.actor} created ${token.created_at}${token.last_used_at ? `, last used ${token.last_used_at}` : ''}${token.revoked_at ? `, revoked ${token.revoked_at}` : ''}\n`).join(''));
        return 0;
      }
      case 'revoke': {
        if (rest.length !== 1) throw new TokenUsageError('token revoke takes one token ID (see token list)');
        const revoked = await store.revokeToken(rest[0]!);
        if (revoked) out(`revoked ${rest[0]}\n`);
        else err(`bulkhead-ladder token: no live token ${rest[0]}\n`);
        return revoked ? 0 : 1;
      }
      default:
        throw new TokenUsageError(command === undefined ? 'token needs a command' : `unknown token command ${command}`);
    }
  } catch (error) {
    err(`bulkhead-ladder token: ${errorMessage(error)}\n${error instanceof TokenUsageError ? `\n${TOKEN_USAGE}\n` : ''}`);
    return 2;
  } finally {
    store.close();
  }
}
