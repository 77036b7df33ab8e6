import { commandControlDir, CommandUsageError, parseCommandLine, runCommand, type CommandOutput } from './commands.js';
import { loadLadderPolicy } from './server.js';
import { ladderDatabase, openLadderStores } from './store/open-stores.js';

export const TOKEN_USAGE = `usage: bulkhead-ladder token create --actor NAME [--config DIR]
       bulkhead-ladder token list [--actor NAME] [--config DIR]
       bulkhead-ladder token revoke ID [--config DIR]

  --config DIR   the control-plane folder holding ladder_policy.yaml and the database (default: ./.bulkhead)
  --actor NAME   the principal the token acts as (create), or whose tokens to list`;

/**
 * `bulkhead-ladder token …`: manages the bearer tokens of the HTTP tool endpoint in the ladder
 * database the policy names (a SQLite file or PostgreSQL). A created token's secret is printed
 * once, alone on stdout, so that `TOKEN=$(bulkhead-ladder token create --actor ada)` captures
 * exactly it: only its hash is stored. Listing before any token exists makes no SQLite file.
 */
export async function runTokenCommand(argv: readonly string[], cwd: string, output: CommandOutput): Promise<number> {
  const { out, err } = output;
  return runCommand('token', TOKEN_USAGE, output, async () => {
    const { positionals, values } = parseCommandLine(argv, { actor: { type: 'string' }, config: { type: 'string' } });
    if (values.help) {
      out(`${TOKEN_USAGE}\n`);
      return 0;
    }
    const [command, ...rest] = positionals;
    // The command line is checked before the database is opened: a mistake never waits on a connection.
    if (command === 'create' && (values.actor === undefined || rest.length > 0)) throw new CommandUsageError('token create takes --actor NAME and nothing else');
    if (command === 'list' && rest.length > 0) throw new CommandUsageError('token list takes no ID');
    if (command === 'revoke' && rest.length !== 1) throw new CommandUsageError('token revoke takes one token ID (see token list)');
    if (command !== 'create' && command !== 'list' && command !== 'revoke') throw new CommandUsageError(command === undefined ? 'token needs a command' : `unknown token command ${command}`);

    const controlDir = commandControlDir(cwd, values.config);
    const stores = await openLadderStores(ladderDatabase(controlDir, loadLadderPolicy(controlDir)));
    const store = stores.work;
    try {
      switch (command) {
        case 'create': {
          const token = await store.createToken(values.actor!);
          err(`bulkhead-ladder token: created token ${token.id} for ${token.actor}, printed on stdout this once (only its hash is kept); keep it secret\n`);
          out(`${token.secret}\n`);
          return 0;
        }
        case 'list': {
          const tokens = await store.listTokens(values.actor);
          out(tokens.length === 0 ? 'no tokens\n' : tokens.map((token) => `${token.id} ${token.actor} created ${token.created_at}${token.last_used_at ? `, last used ${token.last_used_at}` : ''}${token.revoked_at ? `, revoked ${token.revoked_at}` : ''}\n`).join(''));
          return 0;
        }
        case 'revoke': {
          const revoked = await store.revokeToken(rest[0]!);
          if (revoked) out(`revoked ${rest[0]}\n`);
          else err(`bulkhead-ladder token: no live token ${rest[0]}\n`);
          return revoked ? 0 : 1;
        }
      }
    } finally {
      await stores.close();
    }
  });
}
