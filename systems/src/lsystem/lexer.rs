//! Scanner for one statement (one line) of grammar text.
//!
//! The language has two lexical modes: module strings (axiom, successors,
//! contexts), where `+` or `/` are turtle symbols and `a_r` is one symbol
//! (a letter with a one-character subscript),
//! and expressions (parameters, conditions, constants), where they are
//! operators and `a_r` is an identifier. The parser knows which mode it is in
//! and asks for the matching token kind.

use super::error::Position;

/// Characters that are module symbols on their own (turtle commands and the
/// ABOP punctuation that has no turtle meaning here but must still parse).
const PUNCT_SYMBOLS: &str = "+-&^\\/|!$%[]{}.~'@?*";

/// A token in a module string.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ModTok {
    /// A module symbol: one letter with an optional `_suffix`, or one punctuation symbol.
    Symbol(String),
    /// `(`
    Open,
    /// `)`
    Close,
    /// `,`
    Comma,
    /// `<` (left context separator)
    Lt,
    /// `>` (right context separator)
    Gt,
    /// `:` (condition or probability separator)
    Colon,
    /// `->`, `-->` or `→`
    Arrow,
    /// End of the statement (end of line or a `#` comment).
    End,
    /// Anything else.
    Other(char),
}

/// A token in an expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExprTok {
    Num(f32),
    Ident(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Not,
    Open,
    Close,
    Comma,
    Colon,
    Arrow,
    End,
    /// A number literal that does not fit an `f32`.
    BadNumber,
    Other(char),
}

/// Cursor over the characters of one line.
pub(crate) struct Scanner<'a> {
    chars: &'a [char],
    i: usize,
    line: u32,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(chars: &'a [char], line: u32) -> Self {
        Self { chars, i: 0, line }
    }

    /// Position of the next unread character.
    pub(crate) fn pos(&self) -> Position {
        Position {
            line: self.line,
            column: self.i as u32 + 1,
        }
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// Skips whitespace; a `#` followed by whitespace or ending the line starts a comment that
    /// runs to the end of the line. Any other `#` is left to the caller, for whom it is not a
    /// symbol (an error, where `A -> B#C` once silently lost `C`).
    pub(crate) fn skip_ws(&mut self) {
        while let Some(c) = self.peek_at(0) {
            if c == '#' && self.peek_at(1).is_none_or(char::is_whitespace) {
                self.i = self.chars.len();
            } else if c.is_whitespace() {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    /// The rest of the line starts with `word` followed by a non-identifier character.
    pub(crate) fn starts_with_word(&mut self, word: &str) -> bool {
        self.skip_ws();
        let n = word.chars().count();
        let matches = word.chars().enumerate().all(|(k, c)| self.peek_at(k) == Some(c));
        matches && !self.peek_at(n).is_some_and(is_ident_char)
    }

    /// Moves to character index `i` of the line.
    pub(crate) fn seek(&mut self, i: usize) {
        self.i = i.min(self.chars.len());
    }

    /// Consumes `n` characters (after whitespace).
    pub(crate) fn advance(&mut self, n: usize) {
        self.skip_ws();
        self.i = (self.i + n).min(self.chars.len());
    }

    /// Reads an identifier `[A-Za-z_][A-Za-z0-9_]*` if one comes next.
    pub(crate) fn ident(&mut self) -> Option<(String, Position)> {
        self.skip_ws();
        let pos = self.pos();
        let first = self.peek_at(0)?;
        if !(first.is_alphabetic() || first == '_') {
            return None;
        }
        let start = self.i;
        while self.peek_at(0).is_some_and(is_ident_char) {
            self.i += 1;
        }
        Some((self.chars[start..self.i].iter().collect(), pos))
    }

    /// The next module-string token and where it starts, consumed.
    pub(crate) fn mod_token(&mut self) -> (ModTok, Position) {
        self.skip_ws();
        let pos = self.pos();
        let Some(c) = self.peek_at(0) else {
            return (ModTok::End, pos);
        };
        let (tok, len) = match c {
            '(' => (ModTok::Open, 1),
            ')' => (ModTok::Close, 1),
            ',' => (ModTok::Comma, 1),
            '<' => (ModTok::Lt, 1),
            '>' => (ModTok::Gt, 1),
            ':' => (ModTok::Colon, 1),
            '→' => (ModTok::Arrow, 1),
            '-' if self.peek_at(1) == Some('>') => (ModTok::Arrow, 2),
            '-' if self.peek_at(1) == Some('-') && self.peek_at(2) == Some('>') => (ModTok::Arrow, 3),
            c if PUNCT_SYMBOLS.contains(c) => (ModTok::Symbol(c.to_string()), 1),
            c if c.is_alphabetic() => {
                // One letter is one module (`FF` is two); `_` and one letter or digit
                // subscript it (`a_r`, `b_l` in the Anabaena system), and the subscript ends
                // the symbol, so `F_lF_r` is two modules as ABOP writes them.
                let subscripted = self.peek_at(1) == Some('_') && self.peek_at(2).is_some_and(char::is_alphanumeric);
                let len = if subscripted { 3 } else { 1 };
                let name = self.chars[self.i..self.i + len].iter().collect();
                (ModTok::Symbol(name), len)
            }
            other => (ModTok::Other(other), 1),
        };
        self.i += len;
        (tok, pos)
    }

    /// The next module-string token without consuming it.
    pub(crate) fn peek_mod(&mut self) -> ModTok {
        let save = self.i;
        let (tok, _) = self.mod_token();
        self.i = save;
        tok
    }

    /// The next expression token and where it starts, consumed.
    pub(crate) fn expr_token(&mut self) -> (ExprTok, Position) {
        self.skip_ws();
        let pos = self.pos();
        let Some(c) = self.peek_at(0) else {
            return (ExprTok::End, pos);
        };
        let next = self.peek_at(1);
        let (tok, len) = match c {
            '0'..='9' | '.' => return (self.number(), pos),
            c if c.is_alphabetic() || c == '_' => {
                let (name, _) = self.ident().unwrap_or_default();
                return (ExprTok::Ident(name), pos);
            }
            '+' => (ExprTok::Plus, 1),
            '-' if next == Some('>') => (ExprTok::Arrow, 2),
            '-' if next == Some('-') && self.peek_at(2) == Some('>') => (ExprTok::Arrow, 3),
            '-' => (ExprTok::Minus, 1),
            '→' => (ExprTok::Arrow, 1),
            '*' => (ExprTok::Star, 1),
            '/' => (ExprTok::Slash, 1),
            '^' => (ExprTok::Caret, 1),
            '<' if next == Some('=') => (ExprTok::Le, 2),
            '<' => (ExprTok::Lt, 1),
            '>' if next == Some('=') => (ExprTok::Ge, 2),
            '>' => (ExprTok::Gt, 1),
            '=' if next == Some('=') => (ExprTok::EqEq, 2),
            '!' if next == Some('=') => (ExprTok::Ne, 2),
            '!' => (ExprTok::Not, 1),
            '&' if next == Some('&') => (ExprTok::AndAnd, 2),
            '|' if next == Some('|') => (ExprTok::OrOr, 2),
            '(' => (ExprTok::Open, 1),
            ')' => (ExprTok::Close, 1),
            ',' => (ExprTok::Comma, 1),
            ':' => (ExprTok::Colon, 1),
            other => (ExprTok::Other(other), 1),
        };
        self.i += len;
        (tok, pos)
    }

    /// The next expression token without consuming it.
    pub(crate) fn peek_expr(&mut self) -> ExprTok {
        let save = self.i;
        let (tok, _) = self.expr_token();
        self.i = save;
        tok
    }

    fn number(&mut self) -> ExprTok {
        let start = self.i;
        while self.peek_at(0).is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.i += 1;
        }
        if matches!(self.peek_at(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek_at(1), Some('+' | '-')));
            if self.peek_at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1 + sign;
                while self.peek_at(0).is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
            }
        }
        let text: String = self.chars[start..self.i].iter().collect();
        match text.parse::<f32>() {
            Ok(v) if v.is_finite() => ExprTok::Num(v),
            _ => ExprTok::BadNumber,
        }
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Describes a module token for "found ..." in error messages.
pub(crate) fn describe_mod(tok: &ModTok) -> String {
    match tok {
        ModTok::Symbol(s) => format!("`{s}`"),
        ModTok::Open => "`(`".into(),
        ModTok::Close => "`)`".into(),
        ModTok::Comma => "`,`".into(),
        ModTok::Lt => "`<`".into(),
        ModTok::Gt => "`>`".into(),
        ModTok::Colon => "`:`".into(),
        ModTok::Arrow => "`->`".into(),
        ModTok::End => "end of line".into(),
        ModTok::Other(c) => format!("`{c}`"),
    }
}

/// Describes an expression token for "found ..." in error messages.
pub(crate) fn describe_expr(tok: &ExprTok) -> String {
    let s = match tok {
        ExprTok::Num(v) => return format!("number {v}"),
        ExprTok::Ident(name) => return format!("`{name}`"),
        ExprTok::Other(c) => return format!("`{c}`"),
        ExprTok::BadNumber => "a malformed number or one out of f32 range",
        ExprTok::Plus => "`+`",
        ExprTok::Minus => "`-`",
        ExprTok::Star => "`*`",
        ExprTok::Slash => "`/`",
        ExprTok::Caret => "`^`",
        ExprTok::Lt => "`<`",
        ExprTok::Le => "`<=`",
        ExprTok::Gt => "`>`",
        ExprTok::Ge => "`>=`",
        ExprTok::EqEq => "`==`",
        ExprTok::Ne => "`!=`",
        ExprTok::AndAnd => "`&&`",
        ExprTok::OrOr => "`||`",
        ExprTok::Not => "`!`",
        ExprTok::Open => "`(`",
        ExprTok::Close => "`)`",
        ExprTok::Comma => "`,`",
        ExprTok::Colon => "`:`",
        ExprTok::Arrow => "`->`",
        ExprTok::End => "end of line",
    };
    s.to_string()
}
