import { describe, expect, it } from 'vitest';
import { translator } from './i18n';

describe('translator', () => {
  it('says one memory, and two memories', () => {
    const t = translator('en');
    expect(t('sessions.forgotten', { count: 1 })).toBe('Forgot 1 memory (undo from the Memory page).');
    expect(t('sessions.forgotten', { count: 2 })).toBe('Forgot 2 memories (undo from the Memory page).');
    expect(t('sessions.forgotten', { count: 0 })).toBe('Forgot 0 memories (undo from the Memory page).');
    expect(t('sessions.messages', { count: 1 })).toBe('1 message');
  });

  it('keeps a string without a form for one as it is', () => {
    expect(translator('en')('memory.selected', { count: 1 })).toBe('1 selected');
  });

  it('uses the one form of a locale that has none for its only form', () => {
    const zh = translator('zh-CN');
    expect(zh('sessions.messages', { count: 1 })).toBe(zh('sessions.messages', { count: 2 }).replace('2', '1'));
  });
});
