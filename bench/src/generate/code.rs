//! A tiny source writer: lines with indentation.

#[derive(Default)]
pub struct Code {
    out: String,
    indent: usize,
}

impl Code {
    pub fn line(&mut self, text: impl AsRef<str>) -> &mut Self {
        let text = text.as_ref();
        if !text.is_empty() {
            self.out.push_str(&"    ".repeat(self.indent));
        }
        self.out.push_str(text);
        self.out.push('\n');
        self
    }

    pub fn blank(&mut self) -> &mut Self {
        self.out.push('\n');
        self
    }

    pub fn indent(&mut self) -> &mut Self {
        self.indent += 1;
        self
    }

    pub fn dedent(&mut self) -> &mut Self {
        self.indent = self.indent.saturating_sub(1);
        self
    }

    pub fn lines(&mut self, block: &str) -> &mut Self {
        for line in block.lines() {
            self.line(line);
        }
        self
    }

    pub fn finish(self) -> String {
        self.out
    }
}
