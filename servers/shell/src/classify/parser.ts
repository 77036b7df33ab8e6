import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

let loading: Promise<Parser> | undefined;

/** The bash parser: the grammar is a wasm module, loaded once per process and shared. */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    await Parser.init();
    const bash = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(bash);
    return parser;
  })();
  return loading;
}
