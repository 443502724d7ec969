//! Statement parser: turns grammar text into an [`LSystem`].

use std::collections::HashMap;

use super::error::{LSystemError, Position};
use super::expr::{Expr, Scope, parse_expr};
use super::grammar::{LSystem, PatModule, Production, RightElem, SuccModule};
use super::lexer::{ExprTok, ModTok, Scanner, describe_mod};
use super::module::{ModuleBuffer, SymbolId, SymbolTable, sym};

/// Most formal parameters one production may bind (contexts included).
const MAX_FORMALS: usize = 64;

/// Most branches a right context may enter; matching recurses once per branch.
const MAX_CONTEXT_BRANCHES: usize = 32;

/// A module as written in the axiom or a successor, before evaluation.
struct WrittenModule {
    symbol: SymbolId,
    args: Vec<Expr>,
    pos: Position,
}

/// A module of a predecessor or context, with its formal parameter names.
struct PatternModule {
    symbol: SymbolId,
    formals: usize,
    first_slot: usize,
    pos: Position,
}

/// A production's condition, successor and probability.
struct Body {
    condition: Option<Expr>,
    successor: Vec<SuccModule>,
    args: Vec<Expr>,
    probability: Option<(Expr, Position)>,
}

/// Where a symbol is used with some parameter count, for the arity check.
struct Use {
    symbol: SymbolId,
    arity: usize,
    pos: Position,
}

#[derive(Default)]
struct Parser {
    symbols: SymbolTable,
    constants: HashMap<String, f32>,
    ignore: Vec<SymbolId>,
    axiom: Option<(ModuleBuffer, Position)>,
    productions: Vec<Production>,
    uses: Vec<Use>,
    has_cut: bool,
}

impl LSystem {
    /// Parses and compiles grammar text.
    pub fn parse(text: &str) -> Result<Self, LSystemError> {
        parse(text)
    }
}

fn parse(text: &str) -> Result<LSystem, LSystemError> {
    let mut p = Parser::default();
    let mut last_line = 0;
    for (index, line) in text.lines().enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        last_line = line_no;
        let chars: Vec<char> = line.chars().collect();
        p.statement(&mut Scanner::new(&chars, line_no), &chars)?;
    }
    let Some((axiom, axiom_pos)) = p.axiom.take() else {
        return Err(LSystemError::MissingAxiom {
            pos: Position {
                line: last_line + 1,
                column: 1,
            },
        });
    };
    p.check_arities()?;
    Ok(p.finish(axiom, axiom_pos))
}

fn syntax(pos: Position, expected: &str, found: &ModTok) -> LSystemError {
    LSystemError::Syntax {
        pos,
        expected: expected.into(),
        found: describe_mod(found),
    }
}

impl Parser {
    fn statement(&mut self, sc: &mut Scanner<'_>, chars: &[char]) -> Result<(), LSystemError> {
        let indent = chars.iter().take_while(|c| c.is_whitespace()).count();
        if chars.get(indent) == Some(&'#') && chars.get(indent + 1).is_some_and(|c| c.is_alphabetic()) {
            sc.seek(indent + 1);
            return self.directive(sc);
        }
        if sc.peek_mod() == ModTok::End {
            return Ok(());
        }
        for word in ["axiom", "omega", "ω"] {
            if sc.starts_with_word(word) {
                let save_pos = sc.pos();
                sc.advance(word.chars().count());
                if sc.peek_mod() == ModTok::Colon {
                    sc.mod_token();
                    return self.axiom_statement(sc, save_pos);
                }
                let (tok, pos) = sc.mod_token();
                return Err(syntax(pos, "`:` after the axiom keyword", &tok));
            }
        }
        self.skip_label(sc, chars);
        self.production(sc)
    }

    fn directive(&mut self, sc: &mut Scanner<'_>) -> Result<(), LSystemError> {
        let Some((name, pos)) = sc.ident() else {
            return Err(syntax(sc.pos(), "a directive name", &sc.peek_mod()));
        };
        match name.as_str() {
            "define" => {
                let Some((constant, cpos)) = sc.ident() else {
                    let (tok, pos) = sc.mod_token();
                    return Err(syntax(pos, "a constant name after #define", &tok));
                };
                if self.constants.contains_key(&constant) {
                    return Err(LSystemError::Duplicate {
                        pos: cpos,
                        name: constant,
                    });
                }
                let expr = parse_expr(
                    sc,
                    &Scope {
                        formals: &[],
                        constants: &self.constants,
                    },
                )?;
                let (tok, pos) = sc.expr_token();
                if tok != ExprTok::End {
                    return Err(LSystemError::Syntax {
                        pos,
                        expected: "an operator or end of line".into(),
                        found: super::lexer::describe_expr(&tok),
                    });
                }
                let Expr::Const(value) = expr else {
                    return Err(syntax(cpos, "a constant expression", &ModTok::Symbol(constant)));
                };
                self.constants.insert(constant, value);
                Ok(())
            }
            "ignore" => {
                if sc.peek_mod() == ModTok::Colon {
                    sc.mod_token();
                }
                loop {
                    match sc.mod_token() {
                        (ModTok::End, _) => return Ok(()),
                        (ModTok::Symbol(s), pos) if s == "[" || s == "]" => {
                            return Err(syntax(pos, "a symbol other than a bracket", &ModTok::Symbol(s)));
                        }
                        (ModTok::Symbol(s), pos) => {
                            let id = self.intern(&s, pos)?;
                            self.ignore.push(id);
                        }
                        (tok, pos) => return Err(syntax(pos, "a module symbol", &tok)),
                    }
                }
            }
            _ => Err(LSystemError::Syntax {
                pos,
                expected: "`#define` or `#ignore`".into(),
                found: format!("`#{name}`"),
            }),
        }
    }

    /// Skips a thesis-style production label such as `p1:`.
    fn skip_label(&mut self, sc: &mut Scanner<'_>, chars: &[char]) {
        let start = chars.iter().take_while(|c| c.is_whitespace()).count();
        let mut k = start + 1;
        if chars.get(start) != Some(&'p') {
            return;
        }
        while chars.get(k).is_some_and(char::is_ascii_digit) {
            k += 1;
        }
        if k == start + 1 {
            return;
        }
        let colon = k + chars[k..].iter().take_while(|c| c.is_whitespace()).count();
        if chars.get(colon) == Some(&':') {
            sc.seek(colon + 1);
        }
    }

    fn intern(&mut self, name: &str, pos: Position) -> Result<SymbolId, LSystemError> {
        self.symbols.intern(name).ok_or(LSystemError::TooComplex {
            pos,
            message: "more than 65536 distinct symbols",
        })
    }

    fn axiom_statement(&mut self, sc: &mut Scanner<'_>, pos: Position) -> Result<(), LSystemError> {
        if self.axiom.is_some() {
            return Err(LSystemError::Duplicate {
                pos,
                name: "axiom".into(),
            });
        }
        let (word, end) = self.word(sc, &[])?;
        if end != ModTok::End {
            return Err(syntax(sc.pos(), "a module symbol or end of line", &end));
        }
        let mut buffer = ModuleBuffer::with_capacity(word.len(), 0);
        let mut values = Vec::new();
        for m in &word {
            values.clear();
            for arg in &m.args {
                match arg {
                    Expr::Const(v) => values.push(*v),
                    _ => return Err(syntax(m.pos, "constant parameters in the axiom", &ModTok::Other('?'))),
                }
            }
            buffer.push(m.symbol, &values);
        }
        self.axiom = Some((buffer, pos));
        Ok(())
    }

    /// Parses a module string up to the end of the line or a `:`, which it
    /// consumes and returns. Brackets must balance.
    fn word(&mut self, sc: &mut Scanner<'_>, formals: &[String]) -> Result<(Vec<WrittenModule>, ModTok), LSystemError> {
        let mut out = Vec::new();
        let mut open = Vec::new();
        let end = loop {
            let (tok, pos) = sc.mod_token();
            let name = match tok {
                ModTok::Symbol(name) => name,
                ModTok::End | ModTok::Colon => break tok,
                other => return Err(syntax(pos, "a module symbol", &other)),
            };
            let symbol = self.intern(&name, pos)?;
            match symbol {
                sym::PUSH => open.push(pos),
                sym::POP if open.pop().is_none() => {
                    return Err(LSystemError::UnbalancedBracket {
                        pos,
                        message: "`]` without a matching `[`",
                    });
                }
                sym::CUT => self.has_cut = true,
                _ => {}
            }
            let mut args = Vec::new();
            if sc.peek_mod() == ModTok::Open {
                sc.mod_token();
                let scope = Scope {
                    formals,
                    constants: &self.constants,
                };
                loop {
                    args.push(parse_expr(sc, &scope)?);
                    match sc.expr_token() {
                        (ExprTok::Comma, _) => {}
                        (ExprTok::Close, _) => break,
                        (tok, pos) => {
                            return Err(LSystemError::Syntax {
                                pos,
                                expected: "an operator, `,` or `)`".into(),
                                found: super::lexer::describe_expr(&tok),
                            });
                        }
                    }
                }
            }
            self.uses.push(Use {
                symbol,
                arity: args.len(),
                pos,
            });
            out.push(WrittenModule { symbol, args, pos });
        };
        if let Some(pos) = open.pop() {
            return Err(LSystemError::UnbalancedBracket {
                pos,
                message: "`[` is never closed",
            });
        }
        Ok((out, end))
    }

    /// Parses a predecessor or context pattern: modules with formal parameter
    /// names, stopping before `<`, `>`, `:` or the arrow.
    fn pattern(&mut self, sc: &mut Scanner<'_>, formals: &mut Vec<String>) -> Result<Vec<PatternModule>, LSystemError> {
        let mut out = Vec::new();
        while let ModTok::Symbol(name) = sc.peek_mod() {
            let (_, pos) = sc.mod_token();
            let symbol = self.intern(&name, pos)?;
            let first_slot = formals.len();
            if sc.peek_mod() == ModTok::Open {
                sc.mod_token();
                loop {
                    let Some((formal, fpos)) = sc.ident() else {
                        let (tok, pos) = sc.mod_token();
                        return Err(syntax(pos, "a formal parameter name", &tok));
                    };
                    if formals.contains(&formal) {
                        return Err(LSystemError::Duplicate {
                            pos: fpos,
                            name: formal,
                        });
                    }
                    if formals.len() == MAX_FORMALS {
                        return Err(LSystemError::TooComplex {
                            pos: fpos,
                            message: "more than 64 formal parameters in one production",
                        });
                    }
                    formals.push(formal);
                    match sc.mod_token() {
                        (ModTok::Comma, _) => {}
                        (ModTok::Close, _) => break,
                        (tok, pos) => return Err(syntax(pos, "`,` or `)`", &tok)),
                    }
                }
            }
            let formals_here = formals.len() - first_slot;
            if !matches!(symbol, sym::PUSH | sym::POP) {
                self.uses.push(Use {
                    symbol,
                    arity: formals_here,
                    pos,
                });
            }
            out.push(PatternModule {
                symbol,
                formals: formals_here,
                first_slot,
                pos,
            });
        }
        Ok(out)
    }

    fn production(&mut self, sc: &mut Scanner<'_>) -> Result<(), LSystemError> {
        let mut formals = Vec::new();
        let start = sc.pos();
        let first = self.pattern(sc, &mut formals)?;
        let (mut left, mut pred) = (Vec::new(), first);
        if sc.peek_mod() == ModTok::Lt {
            sc.mod_token();
            left = pred;
            pred = self.pattern(sc, &mut formals)?;
        }
        let pred = match pred.as_slice() {
            [one] if matches!(one.symbol, sym::PUSH | sym::POP) => {
                let found = ModTok::Symbol(self.symbols.name(one.symbol).into());
                return Err(syntax(one.pos, "a predecessor other than a bracket", &found));
            }
            [one] => to_pat(one),
            [] => {
                let (tok, pos) = sc.mod_token();
                return Err(syntax(pos, "a predecessor module, `axiom:` or `#define`", &tok));
            }
            [_, second, ..] => {
                let found = ModTok::Symbol(self.symbols.name(second.symbol).into());
                return Err(syntax(
                    second.pos,
                    "`<`, `>`, `:` or `->` after the one-module predecessor",
                    &found,
                ));
            }
        };
        let mut right = Vec::new();
        if sc.peek_mod() == ModTok::Gt {
            sc.mod_token();
            sc.skip_ws();
            let pos = sc.pos();
            right = self.pattern(sc, &mut formals)?;
            if right.iter().filter(|m| m.symbol == sym::PUSH).count() > MAX_CONTEXT_BRANCHES {
                return Err(LSystemError::TooComplex {
                    pos,
                    message: "right context enters more than 32 branches",
                });
            }
        }
        let left = self.left_context(&left)?;
        let right: Vec<RightElem> = if is_wildcard(&right, &self.symbols) {
            Vec::new()
        } else {
            right
                .iter()
                .map(|m| match m.symbol {
                    sym::PUSH => RightElem::Push,
                    sym::POP => RightElem::Pop,
                    _ => RightElem::Module(to_pat(m)),
                })
                .collect()
        };
        let Body {
            condition,
            successor,
            args,
            probability,
        } = self.production_rest(sc, &formals)?;
        let constant = Production::constant_successor(&successor, &args);
        self.productions.push(Production {
            pos: start,
            pred,
            left,
            right,
            slots: formals.len() as u16,
            condition,
            probability,
            successor,
            args,
            constant,
        });
        Ok(())
    }

    /// Parses what follows the predecessor and its contexts.
    fn production_rest(&mut self, sc: &mut Scanner<'_>, formals: &[String]) -> Result<Body, LSystemError> {
        let mut condition = None;
        if sc.peek_mod() == ModTok::Colon {
            sc.mod_token();
            if sc.peek_expr() == ExprTok::Star {
                sc.expr_token();
            } else {
                condition = Some(parse_expr(
                    sc,
                    &Scope {
                        formals,
                        constants: &self.constants,
                    },
                )?);
            }
        }
        match sc.mod_token() {
            (ModTok::Arrow, _) => {}
            (tok, pos) => return Err(syntax(pos, "`->`", &tok)),
        }
        let (word, end) = self.word(sc, formals)?;
        let mut probability = None;
        if end == ModTok::Colon {
            sc.skip_ws();
            let pos = sc.pos();
            probability = Some((
                parse_expr(
                    sc,
                    &Scope {
                        formals,
                        constants: &self.constants,
                    },
                )?,
                pos,
            ));
            let (tok, pos) = sc.expr_token();
            if tok != ExprTok::End {
                return Err(LSystemError::Syntax {
                    pos,
                    expected: "an operator or end of line".into(),
                    found: super::lexer::describe_expr(&tok),
                });
            }
        }
        let mut successor = Vec::with_capacity(word.len());
        let mut args = Vec::new();
        for m in word {
            let start = args.len() as u32;
            args.extend(m.args);
            successor.push(SuccModule {
                symbol: m.symbol,
                args: start..args.len() as u32,
            });
        }
        Ok(Body {
            condition,
            successor,
            args,
            probability,
        })
    }

    fn left_context(&self, left: &[PatternModule]) -> Result<Vec<PatModule>, LSystemError> {
        if is_wildcard(left, &self.symbols) {
            return Ok(Vec::new());
        }
        left.iter()
            .map(|m| {
                if matches!(m.symbol, sym::PUSH | sym::POP) {
                    Err(syntax(
                        m.pos,
                        "a module (brackets are not allowed in a left context)",
                        &ModTok::Symbol(self.symbols.name(m.symbol).into()),
                    ))
                } else {
                    Ok(to_pat(m))
                }
            })
            .collect()
    }

    /// Every symbol is used with one parameter count: the one its productions
    /// take, and at most what the turtle reads for turtle symbols. This is
    /// the thesis's rule that a production matches by letter and parameter
    /// count, turned into an error instead of a silent non-match.
    fn check_arities(&self) -> Result<(), LSystemError> {
        let mut arity: HashMap<SymbolId, usize> = HashMap::new();
        for p in &self.productions {
            let a = usize::from(p.pred.arity);
            if let Some(&prev) = arity.get(&p.pred.symbol) {
                if prev != a {
                    return Err(LSystemError::Arity {
                        pos: p.pos,
                        symbol: self.symbols.name(p.pred.symbol).into(),
                        expected: format!("{prev} (as in its first production)"),
                        found: a,
                    });
                }
            } else {
                arity.insert(p.pred.symbol, a);
            }
        }
        for u in &self.uses {
            let turtle_max = sym::MAX_ARITY.get(usize::from(u.symbol)).copied();
            if let Some(max) = turtle_max
                && u.arity > max
            {
                return Err(LSystemError::Arity {
                    pos: u.pos,
                    symbol: self.symbols.name(u.symbol).into(),
                    expected: format!("at most {max} (turtle symbol)"),
                    found: u.arity,
                });
            }
            if let Some(&a) = arity.get(&u.symbol)
                && a != u.arity
            {
                return Err(LSystemError::Arity {
                    pos: u.pos,
                    symbol: self.symbols.name(u.symbol).into(),
                    expected: format!("{a} (as its productions)"),
                    found: u.arity,
                });
            }
        }
        Ok(())
    }

    fn finish(self, mut axiom: ModuleBuffer, axiom_pos: Position) -> LSystem {
        axiom.set_commands(self.symbols.turtle_commands());
        let mut productions = self.productions;
        productions.sort_by_key(|p| p.pred.symbol);
        let mut by_symbol = vec![0..0; self.symbols.len()];
        let mut start = 0;
        while start < productions.len() {
            let symbol = productions[start].pred.symbol;
            let end = start
                + productions[start..]
                    .iter()
                    .take_while(|p| p.pred.symbol == symbol)
                    .count();
            by_symbol[usize::from(symbol)] = start as u32..end as u32;
            start = end;
        }
        let mut ignore = vec![false; self.symbols.len()];
        for id in self.ignore {
            ignore[usize::from(id)] = true;
        }
        let has_context = productions.iter().any(|p| !p.left.is_empty() || !p.right.is_empty());
        let has_cut = self.has_cut || axiom.symbols().contains(&sym::CUT);
        LSystem {
            symbols: self.symbols,
            axiom,
            axiom_pos,
            productions,
            by_symbol,
            ignore,
            has_context,
            has_cut,
        }
    }
}

fn to_pat(m: &PatternModule) -> PatModule {
    PatModule {
        symbol: m.symbol,
        arity: m.formals as u16,
        first_slot: m.first_slot as u16,
    }
}

/// A context written as a lone `*` means "any context" (cpfg convention).
fn is_wildcard(ctx: &[PatternModule], symbols: &SymbolTable) -> bool {
    matches!(ctx, [m] if symbols.name(m.symbol) == "*" && m.formals == 0)
}
