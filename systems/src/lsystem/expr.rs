//! Arithmetic expressions: parsing with precedence, compilation to a small
//! postfix program, and evaluation without allocation.
//!
//! Precedence, loosest first: `||`, `&&`, comparisons (`< <= > >= == !=`),
//! `+ -`, `* /`, unary `- !`, `^` (right-associative, so `-2^2 = -4` and
//! `2^3^2 = 512`). Truth is "not zero"; comparisons and logic give 0 or 1,
//! and `&&`/`||` short-circuit so `x != 0 && 1/x > 2` is safe.

use std::collections::HashMap;

use super::error::{LSystemError, Position};
use super::lexer::{ExprTok, Scanner, describe_expr};

/// Deepest nesting of parentheses and unary operators an expression may have,
/// so hostile input cannot overflow the parser's stack.
const MAX_NESTING: usize = 64;

/// Names of the built-in functions, for error messages.
pub(crate) const FUNCTIONS: &str = "sqrt, abs, floor, ceil, exp, ln, sin, cos, tan (degrees), min(a, b), max(a, b)";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Sqrt,
    Abs,
    Floor,
    Ceil,
    Exp,
    Ln,
    Sin,
    Cos,
    Tan,
    Min,
    Max,
}

impl Func {
    fn lookup(name: &str, args: usize) -> Option<Self> {
        let f = match (name, args) {
            ("sqrt", 1) => Self::Sqrt,
            ("abs", 1) => Self::Abs,
            ("floor", 1) => Self::Floor,
            ("ceil", 1) => Self::Ceil,
            ("exp", 1) => Self::Exp,
            ("ln", 1) => Self::Ln,
            ("sin", 1) => Self::Sin,
            ("cos", 1) => Self::Cos,
            ("tan", 1) => Self::Tan,
            ("min", 2) => Self::Min,
            ("max", 2) => Self::Max,
            _ => return None,
        };
        Some(f)
    }

    fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            Self::Sqrt => a.sqrt(),
            Self::Abs => a.abs(),
            Self::Floor => a.floor(),
            Self::Ceil => a.ceil(),
            Self::Exp => a.exp(),
            Self::Ln => a.ln(),
            Self::Sin => a.to_radians().sin(),
            Self::Cos => a.to_radians().cos(),
            Self::Tan => a.to_radians().tan(),
            Self::Min => a.min(b),
            Self::Max => a.max(b),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Const(f32),
    Slot(u16),
    Neg,
    Not,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// Turns the top of the stack into 0 or 1.
    Truthy,
    /// If the top is false, leave 0 and jump; otherwise pop and continue.
    AndJump(u32),
    /// If the top is true, leave 1 and jump; otherwise pop and continue.
    OrJump(u32),
    Call1(Func),
    Call2(Func),
}

/// A compiled expression. Constant expressions are folded at parse time, and
/// a bare parameter needs no program, which covers most module arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Const(f32),
    Slot(u16),
    Code(Box<Code>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Code {
    ops: Vec<Op>,
    /// Source position of each op, for error messages.
    pos: Vec<Position>,
}

/// What a failed evaluation reports: where, and what happened.
pub(crate) type EvalError = (Position, &'static str);

impl Expr {
    /// Evaluates with formal parameters `env`; `stack` is caller-owned scratch
    /// so the hot derivation loop does not allocate.
    #[inline]
    pub(crate) fn eval(&self, env: &[f32], stack: &mut Vec<f32>) -> Result<f32, EvalError> {
        match self {
            Self::Const(v) => Ok(*v),
            Self::Slot(s) => Ok(env.get(usize::from(*s)).copied().unwrap_or(f32::NAN)),
            Self::Code(code) => code.run(env, stack),
        }
    }
}

impl Code {
    fn run(&self, env: &[f32], stack: &mut Vec<f32>) -> Result<f32, EvalError> {
        stack.clear();
        let mut pc = 0;
        while let Some(&op) = self.ops.get(pc) {
            let at = || self.pos.get(pc).copied().unwrap_or_default();
            match op {
                Op::Const(v) => stack.push(v),
                Op::Slot(s) => stack.push(env.get(usize::from(s)).copied().unwrap_or(f32::NAN)),
                Op::Neg | Op::Not | Op::Truthy | Op::Call1(_) => {
                    let a = stack.pop().unwrap_or(f32::NAN);
                    let r = match op {
                        Op::Neg => -a,
                        Op::Not => f32::from(a == 0.0),
                        Op::Truthy => f32::from(a != 0.0),
                        Op::Call1(f) => f.apply(a, 0.0),
                        _ => f32::NAN,
                    };
                    if !r.is_finite() {
                        return Err((at(), "function result is not finite (domain error or overflow)"));
                    }
                    stack.push(r);
                }
                Op::AndJump(target) | Op::OrJump(target) => {
                    let top = stack.last().copied().unwrap_or(0.0);
                    let and = matches!(op, Op::AndJump(_));
                    if (top == 0.0) == and {
                        stack.pop();
                        stack.push(if and { 0.0 } else { 1.0 });
                        pc = target as usize;
                        continue;
                    }
                    stack.pop();
                }
                _ => {
                    let b = stack.pop().unwrap_or(f32::NAN);
                    let a = stack.pop().unwrap_or(f32::NAN);
                    let r = match op {
                        Op::Add => a + b,
                        Op::Sub => a - b,
                        Op::Mul => a * b,
                        Op::Div if b == 0.0 => return Err((at(), "division by zero")),
                        Op::Div => a / b,
                        Op::Pow => a.powf(b),
                        Op::Lt => f32::from(a < b),
                        Op::Le => f32::from(a <= b),
                        Op::Gt => f32::from(a > b),
                        Op::Ge => f32::from(a >= b),
                        Op::Eq => f32::from(a == b),
                        Op::Ne => f32::from(a != b),
                        Op::Call2(f) => f.apply(a, b),
                        _ => f32::NAN,
                    };
                    if !r.is_finite() {
                        return Err((at(), "result is not finite (overflow or NaN)"));
                    }
                    stack.push(r);
                }
            }
            pc += 1;
        }
        stack.pop().ok_or((Position::default(), "empty expression"))
    }
}

/// Names an expression may refer to.
pub(crate) struct Scope<'a> {
    /// Formal parameters, in slot order; they shadow constants.
    pub formals: &'a [String],
    /// `#define` constants.
    pub constants: &'a HashMap<String, f32>,
}

/// Parses one expression from `sc`, stopping before `,`, `)`, `->`, `:` or
/// the end of the line. Constant expressions are evaluated now, so `F(1/0)`
/// fails at parse time with the position of the `/`.
pub(crate) fn parse_expr(sc: &mut Scanner<'_>, scope: &Scope<'_>) -> Result<Expr, LSystemError> {
    let mut p = ExprParser {
        sc,
        scope,
        ops: Vec::new(),
        pos: Vec::new(),
        depth: 0,
    };
    p.or()?;
    let code = Code { ops: p.ops, pos: p.pos };
    match code.ops.as_slice() {
        [Op::Const(v)] => Ok(Expr::Const(*v)),
        [Op::Slot(s)] => Ok(Expr::Slot(*s)),
        ops if !ops.iter().any(|op| matches!(op, Op::Slot(_))) => code
            .run(&[], &mut Vec::new())
            .map(Expr::Const)
            .map_err(|(pos, message)| LSystemError::Arithmetic { pos, message, step: 0 }),
        _ => Ok(Expr::Code(Box::new(code))),
    }
}

struct ExprParser<'s, 'a, 'b> {
    sc: &'s mut Scanner<'a>,
    scope: &'s Scope<'b>,
    ops: Vec<Op>,
    pos: Vec<Position>,
    depth: usize,
}

impl ExprParser<'_, '_, '_> {
    fn emit(&mut self, op: Op, pos: Position) {
        self.ops.push(op);
        self.pos.push(pos);
    }

    fn expected(&mut self, expected: &str) -> LSystemError {
        let (tok, pos) = self.sc.expr_token();
        LSystemError::Syntax {
            pos,
            expected: expected.into(),
            found: describe_expr(&tok),
        }
    }

    fn or(&mut self) -> Result<(), LSystemError> {
        self.and()?;
        while self.sc.peek_expr() == ExprTok::OrOr {
            let (_, pos) = self.sc.expr_token();
            let jump = self.ops.len();
            self.emit(Op::OrJump(0), pos);
            self.and()?;
            self.emit(Op::Truthy, pos);
            self.ops[jump] = Op::OrJump(self.ops.len() as u32);
        }
        Ok(())
    }

    fn and(&mut self) -> Result<(), LSystemError> {
        self.comparison()?;
        while self.sc.peek_expr() == ExprTok::AndAnd {
            let (_, pos) = self.sc.expr_token();
            let jump = self.ops.len();
            self.emit(Op::AndJump(0), pos);
            self.comparison()?;
            self.emit(Op::Truthy, pos);
            self.ops[jump] = Op::AndJump(self.ops.len() as u32);
        }
        Ok(())
    }

    fn comparison(&mut self) -> Result<(), LSystemError> {
        self.additive()?;
        loop {
            let op = match self.sc.peek_expr() {
                ExprTok::Lt => Op::Lt,
                ExprTok::Le => Op::Le,
                ExprTok::Gt => Op::Gt,
                ExprTok::Ge => Op::Ge,
                ExprTok::EqEq => Op::Eq,
                ExprTok::Ne => Op::Ne,
                _ => return Ok(()),
            };
            let (_, pos) = self.sc.expr_token();
            self.additive()?;
            self.emit(op, pos);
        }
    }

    fn additive(&mut self) -> Result<(), LSystemError> {
        self.multiplicative()?;
        loop {
            let op = match self.sc.peek_expr() {
                ExprTok::Plus => Op::Add,
                ExprTok::Minus => Op::Sub,
                _ => return Ok(()),
            };
            let (_, pos) = self.sc.expr_token();
            self.multiplicative()?;
            self.emit(op, pos);
        }
    }

    fn multiplicative(&mut self) -> Result<(), LSystemError> {
        self.unary()?;
        loop {
            let op = match self.sc.peek_expr() {
                ExprTok::Star => Op::Mul,
                ExprTok::Slash => Op::Div,
                _ => return Ok(()),
            };
            let (_, pos) = self.sc.expr_token();
            self.unary()?;
            self.emit(op, pos);
        }
    }

    fn unary(&mut self) -> Result<(), LSystemError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(LSystemError::TooComplex {
                pos: self.sc.pos(),
                message: "expression nested more than 64 levels deep",
            });
        }
        let op = match self.sc.peek_expr() {
            ExprTok::Minus => Some(Op::Neg),
            ExprTok::Not => Some(Op::Not),
            ExprTok::Plus => None,
            _ => {
                self.power()?;
                self.depth -= 1;
                return Ok(());
            }
        };
        let (_, pos) = self.sc.expr_token();
        self.unary()?;
        if let Some(op) = op {
            self.emit(op, pos);
        }
        self.depth -= 1;
        Ok(())
    }

    fn power(&mut self) -> Result<(), LSystemError> {
        self.primary()?;
        if self.sc.peek_expr() == ExprTok::Caret {
            let (_, pos) = self.sc.expr_token();
            self.unary()?;
            self.emit(Op::Pow, pos);
        }
        Ok(())
    }

    fn primary(&mut self) -> Result<(), LSystemError> {
        match self.sc.peek_expr() {
            ExprTok::Num(v) => {
                let (_, pos) = self.sc.expr_token();
                self.emit(Op::Const(v), pos);
                Ok(())
            }
            ExprTok::Open => {
                self.sc.expr_token();
                self.or()?;
                self.close_paren()
            }
            ExprTok::Ident(name) => {
                let (_, pos) = self.sc.expr_token();
                if self.sc.peek_expr() == ExprTok::Open {
                    return self.call(name, pos);
                }
                if let Some(slot) = self.scope.formals.iter().position(|f| *f == name) {
                    self.emit(Op::Slot(slot as u16), pos);
                } else if let Some(&v) = self.scope.constants.get(&name) {
                    self.emit(Op::Const(v), pos);
                } else {
                    return Err(LSystemError::UnknownIdentifier { pos, name });
                }
                Ok(())
            }
            _ => Err(self.expected("a number, a name, `-` or `(`")),
        }
    }

    fn call(&mut self, name: String, pos: Position) -> Result<(), LSystemError> {
        self.sc.expr_token();
        let mut args = 0;
        if self.sc.peek_expr() != ExprTok::Close {
            loop {
                self.or()?;
                args += 1;
                if self.sc.peek_expr() != ExprTok::Comma {
                    break;
                }
                self.sc.expr_token();
            }
        }
        self.close_paren()?;
        let op = match Func::lookup(&name, args) {
            Some(f @ (Func::Min | Func::Max)) => Op::Call2(f),
            Some(f) => Op::Call1(f),
            None => {
                return Err(LSystemError::UnknownFunction {
                    pos,
                    name,
                    args,
                    expected: FUNCTIONS,
                });
            }
        };
        self.emit(op, pos);
        Ok(())
    }

    fn close_paren(&mut self) -> Result<(), LSystemError> {
        if self.sc.peek_expr() == ExprTok::Close {
            self.sc.expr_token();
            Ok(())
        } else {
            Err(self.expected("an operator or `)`"))
        }
    }
}
