import type { Expr } from './expr';
import type { Stmt } from './module';

/** The direct operands of an expression node. */
export function childrenOf(e: Expr): readonly Expr[] {
  const n = e.node;
  switch (n.kind) {
    case 'unary':
    case 'slice':
    case 'repeat':
      return [n.a];
    case 'binary':
      return [n.a, n.b];
    case 'concat':
      return n.parts;
    case 'mux':
      return [n.sel, n.t, n.f];
    case 'memread':
      return [n.addr];
    default:
      return [];
  }
}

/** Every expression a list of statements evaluates: values, conditions, switch subjects. */
export function* statementExprs(stmts: readonly Stmt[]): Generator<Expr> {
  for (const s of stmts) {
    if (s.kind === 'set') yield s.value;
    else if (s.kind === 'if') {
      yield s.cond;
      yield* statementExprs(s.then);
      yield* statementExprs(s.otherwise);
    } else {
      yield s.subject;
      for (const c of s.cases) yield* statementExprs(c.body);
      if (s.otherwise) yield* statementExprs(s.otherwise);
    }
  }
}
