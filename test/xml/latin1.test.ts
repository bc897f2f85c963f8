import { describe, expect, it } from 'vitest';
import { toLatin1Line } from '../../src/xml/latin1.ts';

describe('toLatin1Line (the one Latin-1 cleaner of the builders)', () => {
  it.each([
    ['plain ASCII and Latin-1 kept', 'Serviço de manutenção nº 3 – ok', 'Serviço de manutenção nº 3 - ok'],
    ['whitespace runs and line breaks become one space', ' a \r\n\t b\u00A0\u2003c ', 'a b c'],
    ['typographic punctuation becomes ASCII', '‘a’ ‚b‛ “c” „d“ – — − • …', `'a' 'b' "c" "d" - - - - ...`],
    ['euro sign', '€ 10', 'EUR 10'],
    ['letters NFKD cannot split', 'Łódź Œuvre œil Đakovo đ ı', 'Lódz OEuvre oeil Dakovo d i'],
    ['accents outside Latin-1 removed', 'Ăștefan Čapek ğ', 'Astefan Capek g'],
    ['compatibility forms', 'ﬁnal Ａ１ ™ ℓ', 'final A1 TM l'],
    [
      'emoji and other scripts dropped without double spaces',
      'Consultoria 🚀 em “software” — fase 1 漢字',
      'Consultoria em "software" - fase 1',
    ],
    ['C0 and C1 controls and DEL dropped', 'a\u0000b\u0007c\u007Fd\u0085e\u009Ff', 'abcdef'],
    ['zero-width and spacing accents dropped', 'a\u200Bb˘c˜d', 'abcd'],
    [
      'the cancellation case',
      'Nota emitida em duplicidade —\r\n“pedido” 42… 😀 Łódź',
      'Nota emitida em duplicidade - "pedido" 42... Lódz',
    ],
    ['empty after cleaning', ' 😀 \n ', ''],
  ])('%s', (_label, input, expected) => {
    expect(toLatin1Line(input)).toBe(expected);
  });

  it('cuts at max characters (after replacements) and trims the cut', () => {
    expect(toLatin1Line('abc def', 4)).toBe('abc');
    expect(toLatin1Line('x…y', 3)).toBe('x..');
    expect(toLatin1Line('ação', 3)).toBe('açã');
  });

  it('returns only characters of U+0020-U+00FF, without leading, trailing or double spaces', () => {
    let all = '';
    for (let cp = 0; cp < 0x3000; cp++) if (cp < 0xd800) all += String.fromCodePoint(cp);
    const out = toLatin1Line(`${all} 🚀 ${all}`);
    expect(/^[\u0020-\u007E\u00A0-\u00FF]*$/.test(out)).toBe(true);
    expect(out).toBe(out.trim());
    expect(out.includes('  ')).toBe(false);
  });
});
