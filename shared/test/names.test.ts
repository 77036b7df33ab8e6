import { describe, expect, it } from 'vitest';
import { globOverText, parseToolName, parseToolPattern, toWireName } from '@bulkhead/core';

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
});
