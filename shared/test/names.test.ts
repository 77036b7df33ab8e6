import { describe, expect, it } from 'vitest';
import { ANY_ARGUMENT, globOverText, parseToolName, parseToolPattern, toWireName } from '@bulkhead/core';

describe('tool names', () => {
  it('turns qualified names into wire names and back', () => {
    expect(toWireName('fs', 'read_file')).toBe('fs__read_file');
    expect(parseToolName('fs__read_file')).toEqual({ namespace: 'fs', tool: 'read_file' });
    expect(parseToolName('fs_write:write_file')).toEqual({ namespace: 'fs_write', tool: 'write_file' });
    expect(parseToolName('read_file')).toBeUndefined();
  });

  it('reads a bare namespace as every tool in it', () => {
    const pattern = parseToolPattern('fs');
    expect(pattern.matchesName('fs:read_file')).toBe(true);
    expect(pattern.matchesName('fs_write:write_file')).toBe(false);
  });

  it('matches globs over qualified names', () => {
    expect(parseToolPattern('*:read_*').matchesName('fs:read_file')).toBe(true);
    expect(parseToolPattern('*:read_*').matchesName('fs:grep')).toBe(false);
    expect(parseToolPattern('fs:*').matchesName('fs:grep')).toBe(true);
  });

  it('parses argument matchers, bare and keyed', () => {
    const bare = parseToolPattern('shell:run_shell(git status*)');
    expect(bare.matchesName('shell:run_shell')).toBe(true);
    expect(bare.argument?.key).toBeUndefined();
    expect(bare.argument?.matches('git status --short')).toBe(true);
    expect(bare.argument?.matches('git push')).toBe(false);
    const keyed = parseToolPattern('fs:read_file(path=src/*)');
    expect(keyed.argument?.key).toBe('path');
    expect(keyed.argument?.matches('src/a/b.ts')).toBe(true);
  });

  it('treats regex characters in argument globs literally', () => {
    const match = globOverText('rm -rf /tmp/(x)?');
    expect(match('rm -rf /tmp/(x)1')).toBe(true);
    expect(match('rm -rf /tmp/x1')).toBe(false);
  });

  it('parses the any-argument key (*=glob) and keys with dashes, and leaves a bare glob with a spaced = in it alone', () => {
    const any = parseToolPattern('*:*(*=**/.env*)');
    expect(any.argument?.key).toBe(ANY_ARGUMENT);
    expect(any.matchesName('filesystem:read_text_file')).toBe(true);
    expect(any.argument?.matches('.env')).toBe(true);
    expect(parseToolPattern('x:y(file-path=a*)').argument?.key).toBe('file-path');
    const bare = parseToolPattern('shell:run_shell(echo x=1*)');
    expect(bare.argument?.key).toBeUndefined();
    expect(bare.argument?.matches('echo x=1 2')).toBe(true);
    // A * that is not the whole key is part of a bare glob, as before.
    expect(parseToolPattern('shell:run_shell(**=x)').argument?.key).toBeUndefined();
  });

  it('lets **/ stand for no folder at all and a trailing /** for nothing below, as path globs do', () => {
    const env = globOverText('**/.env*');
    expect(['.env', '.env.local', 'a/.env', '/home/u/project/.env', './.env'].map(env)).toEqual([true, true, true, true, true]);
    expect(['x.env', 'a/b.env', 'env', '.en'].map(env)).toEqual([false, false, false, false]);
    const src = globOverText('src/**');
    expect(['src', 'src/a', 'src/a/b.ts'].map(src)).toEqual([true, true, true]);
    expect(['srcx', 'lib/src', 'src2/a'].map(src)).toEqual([false, false, false]);
    // In the middle, ** is any text as before, and a lone * still crosses folders.
    expect(globOverText('a/**/b')('a/b')).toBe(true);
    expect(globOverText('a/**/b')('a/x/y/b')).toBe(true);
    expect(globOverText('src/*')('src/a/b')).toBe(true);
  });
});
