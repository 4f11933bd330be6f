/**
 * A small pretty-printer in the style of Wadler's "prettier printer" and Oppen's algorithm (as in
 * the JavaScript formatter Prettier): a document is text with places where a line may break; a
 * `group` is printed flat (its lines as spaces) when it fits in what is left of the line,
 * otherwise its lines break, each to the indentation of the `nest`s around it. A `fill` breaks
 * only the lines it must: it puts as many items on a line as fit. An `alt` chooses between two
 * renderings by whether the group around it is flat or broken.
 *
 * The printer never breaks inside text, so a line can still be too long when an indivisible piece
 * does not fit even on a fresh line; the longest tagged `atom` of such a line is reported
 * (`overflow`), so the caller can replace it (by a temporary's name) and print again.
 */
export type Doc = string | readonly Doc[] | DocNode;

type DocNode =
  | { readonly k: 'line'; readonly soft: boolean }
  | { readonly k: 'nest'; readonly doc: Doc }
  | { readonly k: 'group'; readonly doc: Doc }
  | { readonly k: 'fill'; readonly items: readonly Doc[] }
  | { readonly k: 'alt'; readonly flat: Doc; readonly broken: Doc }
  | { readonly k: 'atom'; readonly text: string; readonly tag: number };

/** A space when flat, a line break when broken. */
export const line: Doc = Object.freeze({ k: 'line', soft: false });
/** Nothing when flat, a line break when broken. */
export const softline: Doc = Object.freeze({ k: 'line', soft: true });
/** Line breaks inside `doc` indent one level more. */
export const nest = (doc: Doc): Doc => ({ k: 'nest', doc });
/** Flat if it fits, else broken. */
export const group = (doc: Doc): Doc => ({ k: 'group', doc });
/** Items separated by `line`s, each of which breaks only when the next item does not fit. */
export const fill = (items: readonly Doc[]): Doc => ({ k: 'fill', items });
/** `flat` where the enclosing group is flat, `broken` where it breaks. */
export const alt = (flat: Doc, broken: Doc): Doc => ({ k: 'alt', flat, broken });
/** Indivisible text; `tag` (≥ 0) identifies it in `Layout.overflow` when its line is too long. */
export const atom = (text: string, tag: number): Doc => ({ k: 'atom', text, tag });

/** `docs` separated by `sep`. */
export function join(sep: Doc, docs: readonly Doc[]): Doc[] {
  const out: Doc[] = [];
  docs.forEach((d, i) => {
    if (i > 0) out.push(sep);
    out.push(d);
  });
  return out;
}

export interface Layout {
  readonly text: string;
  /** For each line longer than the width, the tag of its longest tagged atom (if it has one). */
  readonly overflow: readonly number[];
}

type Mode = 'flat' | 'break';
interface Cmd {
  readonly ind: string;
  readonly mode: Mode;
  readonly doc: Doc;
}

/**
 * Lays `doc` out in `width` columns. The first line starts at column 0 (the caller puts any
 * indentation in the document); broken lines start with `indent` plus `unit` per enclosing nest.
 */
export function layout(doc: Doc, width: number, indent = '', unit = '    '): Layout {
  const out: string[] = [];
  const overflow: number[] = [];
  let pos = 0;
  /** The tagged atoms on the current line: the longest is blamed if the line is too long. */
  let atoms: { tag: number; length: number }[] = [];
  const endLine = () => {
    if (pos > width && atoms.length) overflow.push(atoms.reduce((a, b) => (b.length > a.length ? b : a)).tag);
    atoms = [];
  };
  const stack: Cmd[] = [{ ind: indent, mode: 'break', doc }];
  while (stack.length) {
    const { ind, mode, doc: d } = stack.pop()!;
    if (typeof d === 'string') {
      out.push(d);
      pos += d.length;
    } else if (isArray(d)) {
      for (let i = d.length - 1; i >= 0; i--) stack.push({ ind, mode, doc: d[i]! });
    } else {
      switch (d.k) {
        case 'atom':
          if (d.tag >= 0) atoms.push({ tag: d.tag, length: d.text.length });
          out.push(d.text);
          pos += d.text.length;
          break;
        case 'line':
          if (mode === 'flat') {
            if (!d.soft) {
              out.push(' ');
              pos += 1;
            }
          } else {
            pos -= trimEnd(out);
            endLine();
            out.push('\n', ind);
            pos = ind.length;
          }
          break;
        case 'nest':
          stack.push({ ind: ind + unit, mode, doc: d.doc });
          break;
        case 'group':
          stack.push({ ind, mode: mode === 'flat' || fits({ ind, mode: 'flat', doc: d.doc }, stack, width - pos) ? 'flat' : 'break', doc: d.doc });
          break;
        case 'alt':
          stack.push({ ind, mode, doc: mode === 'flat' ? d.flat : d.broken });
          break;
        case 'fill': {
          if (mode === 'flat') {
            stack.push({ ind, mode, doc: join(line, d.items) });
            break;
          }
          const [first, ...more] = d.items;
          if (first === undefined) break;
          if (!more.length) {
            stack.push({ ind, mode: fits({ ind, mode: 'flat', doc: first }, stack, width - pos) ? 'flat' : 'break', doc: first });
            break;
          }
          const firstFlat = fits({ ind, mode: 'flat', doc: first }, [], width - pos);
          // The last item is followed by whatever comes after the fill (a `;`, a `}`): count it.
          const pairFlat = fits({ ind, mode: 'flat', doc: [first, line, more[0]!] }, more.length === 1 ? stack : [], width - pos);
          stack.push({ ind, mode, doc: fill(more) });
          stack.push({ ind, mode: pairFlat ? 'flat' : 'break', doc: line });
          stack.push({ ind, mode: firstFlat ? 'flat' : 'break', doc: first });
          break;
        }
      }
    }
  }
  pos -= trimEnd(out);
  endLine();
  return { text: out.join(''), overflow };
}

/** The document on one line (every group flat). */
export function flat(doc: Doc): string {
  return layout(group(doc), Infinity).text;
}

const isArray = (d: Doc): d is readonly Doc[] => Array.isArray(d);

/** Drops trailing spaces from the output; returns how many. */
function trimEnd(out: string[]): number {
  let n = 0;
  while (out.length) {
    const last = out[out.length - 1]!;
    const t = last.replace(/ +$/, '');
    n += last.length - t.length;
    if (t === last) return n;
    if (t) {
      out[out.length - 1] = t;
      return n;
    }
    out.pop();
  }
  return n;
}

/**
 * Whether `next` fits in `width` columns, followed by the commands in `rest` (the top of the stack
 * first) up to the first line break they would take.
 */
function fits(next: Cmd, rest: readonly Cmd[], width: number): boolean {
  let restIdx = rest.length;
  const cmds: Cmd[] = [next];
  while (width >= 0) {
    if (!cmds.length) {
      if (restIdx === 0) return true;
      cmds.push(rest[--restIdx]!);
      continue;
    }
    const { ind, mode, doc: d } = cmds.pop()!;
    if (typeof d === 'string') width -= d.length;
    else if (isArray(d)) for (let i = d.length - 1; i >= 0; i--) cmds.push({ ind, mode, doc: d[i]! });
    else {
      switch (d.k) {
        case 'atom':
          width -= d.text.length;
          break;
        case 'line':
          if (mode === 'break') return true;
          if (!d.soft) width -= 1;
          break;
        case 'nest':
        case 'group':
          cmds.push({ ind, mode, doc: d.doc });
          break;
        case 'alt':
          cmds.push({ ind, mode, doc: mode === 'flat' ? d.flat : d.broken });
          break;
        case 'fill':
          cmds.push({ ind, mode, doc: join(line, d.items) });
          break;
      }
    }
  }
  return false;
}
