//! Which bindings are read after a point of the body, for the expansion's moves and
//! borrows: values read more than once (their reads clone), values a loop reads that are read
//! again after it (its `move` closure takes a clone), and the top block's values nothing
//! moves (a loop's pullback may borrow them).

use super::{Block, Op, Operand, StmtKind, VarId};
use std::collections::{BTreeMap, BTreeSet};

/// The variables of a function's top block (its arguments and the bindings of its own
/// statements) that nothing in the body moves: in `name_rev` they live until the sweep has run,
/// so a loop's pullback, used in that frame only, may read them through a reference instead of
/// taking a copy (a 512-byte copy of an `SVector<f64, 64>` per call, which cost the chained
/// Rosenbrock about a tenth of its time). Moves, at any depth: a destructuring, a loop's start
/// value, and an operand given away by value (one not read again, see [`read_again`], whose
/// reads clone); a reference held by a loop would forbid them for a value that is not `Copy`.
pub fn frame_bound(args: &[VarId], body: &Block, again: &BTreeSet<VarId>) -> BTreeSet<VarId> {
    let mut vars: BTreeSet<VarId> = args.iter().copied().collect();
    for s in &body.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { targets, .. } => vars.extend(targets.iter().flatten()),
            StmtKind::Let { target, .. } => {
                vars.insert(*target);
            }
        }
    }
    let mut moved = BTreeSet::new();
    moves_block(body, again, &mut moved);
    vars.difference(&moved).copied().collect()
}

fn moves_block(b: &Block, again: &BTreeSet<VarId>, moved: &mut BTreeSet<VarId>) {
    let by_value = |o: &Operand, moved: &mut BTreeSet<VarId>| {
        if let Operand::Var(v) = o
            && !again.contains(v)
        {
            moved.insert(*v);
        }
    };
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, .. } => {
                moved.insert(*src);
            }
            StmtKind::Let { op, .. } => match &**op {
                Op::Branch(br) => br
                    .blocks
                    .iter()
                    .for_each(|blk| moves_block(blk, again, moved)),
                Op::Loop(l) => {
                    moved.extend(l.init.iter().copied());
                    moves_block(&l.body, again, moved);
                }
                other => other.taken().into_iter().for_each(|a| by_value(a, moved)),
            },
        }
    }
    by_value(&b.result, moved);
}

/// For each loop (by the variable its statement defines), the values from outside it that it
/// reads and that are read again after it: by a later statement of its block or of a block
/// around it, or by the next iteration of a loop around it. A recomputed loop's `move`
/// closure takes the values it reads; it is given a clone of these, so that a value that is
/// not `Copy` (a struct read by its fields) can still be read afterwards.
pub fn read_after_loops(body: &Block) -> BTreeMap<VarId, BTreeSet<VarId>> {
    let mut out = BTreeMap::new();
    after_block(body, &BTreeSet::new(), &mut out);
    out
}

fn after_block(b: &Block, later: &BTreeSet<VarId>, out: &mut BTreeMap<VarId, BTreeSet<VarId>>) {
    // `suffix[k]`: what statements `k..` and the block's value read, and what is read later.
    let mut acc = later.clone();
    reads_operand(&b.result, &mut acc);
    let mut suffix = vec![acc.clone(); b.stmts.len() + 1];
    for k in (0..b.stmts.len()).rev() {
        reads_stmt(&b.stmts[k].kind, &mut acc);
        suffix[k] = acc.clone();
    }
    for (k, s) in b.stmts.iter().enumerate() {
        let StmtKind::Let { target, op, .. } = &s.kind else {
            continue;
        };
        let after = &suffix[k + 1];
        match &**op {
            Op::Loop(l) => {
                let kept: BTreeSet<VarId> = l
                    .free
                    .iter()
                    .copied()
                    .filter(|v| after.contains(v))
                    .collect();
                if !kept.is_empty() {
                    out.insert(*target, kept);
                }
                let mut inner = after.clone();
                reads_block(&l.body, &mut inner);
                after_block(&l.body, &inner, out);
            }
            Op::Branch(br) => {
                for blk in &br.blocks {
                    after_block(blk, after, out);
                }
            }
            _ => {}
        }
    }
}

/// Every variable a block reads, by any operation (a field or an entry of it included).
fn reads_block(b: &Block, acc: &mut BTreeSet<VarId>) {
    for s in &b.stmts {
        reads_stmt(&s.kind, acc);
    }
    reads_operand(&b.result, acc);
}

fn reads_operand(o: &Operand, acc: &mut BTreeSet<VarId>) {
    if let Operand::Var(v) = o {
        acc.insert(*v);
    }
}

fn reads_stmt(s: &StmtKind, acc: &mut BTreeSet<VarId>) {
    match s {
        StmtKind::Verbatim(_) => {}
        StmtKind::Destructure { src, .. } => {
            acc.insert(*src);
        }
        StmtKind::Let { op, .. } => match &**op {
            Op::Field { base, .. } | Op::Index { base, .. } => reads_operand(base, acc),
            Op::Branch(br) => br.blocks.iter().for_each(|blk| reads_block(blk, acc)),
            Op::Loop(l) => {
                acc.extend(l.init.iter().copied());
                acc.extend(l.free.iter().copied());
                reads_block(&l.body, acc);
            }
            other => other
                .taken()
                .into_iter()
                .for_each(|a| reads_operand(a, acc)),
        },
    }
}

/// The variables whose value the forward sweep reads more than once, counting a read in a
/// loop's body as one per iteration. Their reads clone, so that a value that is not `Copy`
/// (a `HeapMatrix`) can be read again; for `Copy` values a clone is the copy a move was.
/// A value read by entry or field (through a borrow) after a read that moves it is read
/// again too (`w * x.clone()` then `x[(1, 0)]`, with `x` a `HeapMatrix`: the move cloned
/// nothing, and the entry's read was E0382).
pub fn read_again(body: &Block) -> BTreeSet<VarId> {
    let mut counts = BTreeMap::new();
    count_block(body, 1, &mut counts);
    let mut again: BTreeSet<VarId> = counts
        .into_iter()
        .filter_map(|(v, n)| (n > 1).then_some(v))
        .collect();
    borrowed_after_move(body, &mut BTreeSet::new(), &mut again);
    again
}

/// Adds to `again` the values `b` borrows (an entry's or a field's base) after moving them,
/// in order; `moved` holds what earlier statements moved.
fn borrowed_after_move(b: &Block, moved: &mut BTreeSet<VarId>, again: &mut BTreeSet<VarId>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, .. } => {
                moved.insert(*src);
            }
            StmtKind::Let { op, .. } => match &**op {
                Op::Field { base, .. } | Op::Index { base, .. } => {
                    if let Operand::Var(v) = base
                        && moved.contains(v)
                    {
                        again.insert(*v);
                    }
                }
                Op::Branch(br) => {
                    let mut after = moved.clone();
                    for blk in &br.blocks {
                        let mut inner = moved.clone();
                        borrowed_after_move(blk, &mut inner, again);
                        after.extend(inner);
                    }
                    *moved = after;
                }
                Op::Loop(l) => {
                    for v in l.free.iter().chain(&l.init) {
                        if moved.contains(v) {
                            again.insert(*v);
                        }
                    }
                    // The body runs again after itself: walked twice.
                    let mut inner = moved.clone();
                    borrowed_after_move(&l.body, &mut inner, again);
                    borrowed_after_move(&l.body, &mut inner, again);
                    moved.extend(inner);
                    moved.extend(l.init.iter().copied());
                }
                other => {
                    for a in other.taken() {
                        if let Operand::Var(v) = a {
                            moved.insert(*v);
                        }
                    }
                }
            },
        }
    }
}

fn count_block(b: &Block, k: usize, counts: &mut BTreeMap<VarId, usize>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Verbatim(_) => {}
            StmtKind::Destructure { src, .. } => *counts.entry(*src).or_default() += k,
            StmtKind::Let { op, .. } => count_op(op, k, counts),
        }
    }
    count_operand(&b.result, k, counts);
}

fn count_operand(o: &Operand, k: usize, counts: &mut BTreeMap<VarId, usize>) {
    if let Operand::Var(v) = o {
        *counts.entry(*v).or_default() += k;
    }
}

fn count_op(op: &Op, k: usize, counts: &mut BTreeMap<VarId, usize>) {
    match op {
        Op::Branch(b) => {
            for blk in &b.blocks {
                count_block(blk, k, counts);
            }
        }
        Op::Loop(l) => {
            for v in &l.init {
                *counts.entry(*v).or_default() += k;
            }
            count_block(&l.body, 2 * k, counts);
        }
        // A field's or an entry's base is read through a borrow.
        other => other
            .taken()
            .into_iter()
            .for_each(|a| count_operand(a, k, counts)),
    }
}
