import { describe, expect, test } from 'vitest';
import { alt, atom, fill, flat, group, layout, line, nest, softline, type Doc } from '../../hdl-gen/emit/pretty';

/**
 * The pretty-printer behind the emitter's line breaking (hdl-gen/emit/pretty.ts): groups flat when
 * they fit, else broken one level in; fills put as many items on a line as fit; the text after a
 * group counts; an atom on a line that is still too long is reported.
 */

const words = (n: number, w = 'word'): Doc[] => Array.from({ length: n }, (_, i) => `${w}${i}`);
const sum = (items: Doc[]): Doc => group(nest(fill(items.map((d, i) => (i < items.length - 1 ? [d, ' +'] : d)))));

describe('layout', () => {
  test('a group that fits is flat; one that does not breaks all its lines, one level in', () => {
    const d = group(['f(', nest([softline, 'alpha,', line, 'beta']), softline, ')']);
    expect(layout(d, 80).text).toBe('f(alpha, beta)');
    expect(layout(d, 10).text).toBe('f(\n    alpha,\n    beta\n)');
  });

  test('nested groups: the outer breaks, an inner one that fits stays flat', () => {
    const inner = group(['(', 'a', line, 'b', ')']);
    const d = group(['x =', nest([line, inner, line, 'long_tail_name'])]);
    expect(layout(d, 20).text).toBe('x =\n    (a b)\n    long_tail_name');
  });

  test('a fill puts as many items on a line as fit, then continues one level in', () => {
    expect(layout(['y = ', sum(words(8))], 30).text).toBe('y = word0 + word1 + word2 +\n    word3 + word4 + word5 +\n    word6 + word7');
    expect(layout(['y = ', sum(words(3))], 80).text).toBe('y = word0 + word1 + word2');
  });

  test('the text after a group or a fill counts: a trailing `;` that would pass the width breaks the line before the last item', () => {
    // "y = word0 + word1" is 17 columns: with ";" it is 18.
    expect(layout(['y = ', sum(words(2)), ';'], 17).text).toBe('y = word0 +\n    word1;');
    expect(layout(['y = ', sum(words(2)), ';'], 18).text).toBe('y = word0 + word1;');
    const g = group(['a', line, 'b']);
    expect(layout([g, ') begin'], 9).text).toBe('a\nb) begin');
    expect(layout([g, ') begin'], 10).text).toBe('a b) begin');
  });

  test('broken lines start at the indent given plus one unit per nest', () => {
    expect(layout(['        z = ', sum(words(4))], 30, '        ').text).toBe('        z = word0 + word1 +\n            word2 + word3');
    expect(layout(['z = ', sum(words(4))], 20, '', '  ').text).toBe('z = word0 + word1 +\n  word2 + word3');
  });

  test('alt: the flat form where its group is flat, the broken form where it breaks', () => {
    const d = group(alt('s ? a : (t ? b : c)', ['s ? a :', line, 't ? b :', line, 'c']));
    expect(layout(d, 40).text).toBe('s ? a : (t ? b : c)');
    expect(layout(d, 10).text).toBe('s ? a :\nt ? b :\nc');
  });

  test('no trailing spaces; a line that is still too long names its longest atom', () => {
    const d = ['x = ', group(nest([atom('short', 1), ' +', line, atom('a_very_long_atom_indeed', 2), ' +', line, 'c']))];
    const r = layout(d, 16);
    expect(r.text).toBe('x = short +\n    a_very_long_atom_indeed +\n    c');
    expect(r.text.split('\n').every((l) => l === l.trimEnd())).toBe(true);
    expect(r.overflow).toEqual([2]);
    expect(layout(d, 40).overflow).toEqual([]);
    // Untagged text is never reported (nothing could replace it).
    expect(layout(['x', 'y'.repeat(30)], 10).overflow).toEqual([]);
  });

  test('flat() puts everything on one line', () => {
    expect(flat(['y = ', sum(words(40))])).toBe(`y = ${words(40).join(' + ')}`);
  });

  test('a fill of thousands of items lays out in well under a second', () => {
    const t0 = performance.now();
    const r = layout(['y = ', sum(words(5000))], 160);
    expect(r.text.split('\n').every((l) => l.length <= 160)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
