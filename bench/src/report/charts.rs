//! The report's charts: horizontal grouped bars drawn with plotters' SVG backend into a string,
//! inlined in report.html. Without plotters' font features the backend writes each label as an
//! SVG `<text>` (escaped) for the browser to set, so a chart is the same bytes on every machine
//! and the page needs no script and no font files.
//!
//! One row per category (a workload, or a peer in the summary), one bar per series in it.
//! Ratios are drawn on a log₂ axis from 1×, so a bar to the right is Ferrule ahead and one to the
//! left behind, and 2× ahead looks as far from even as 2× behind.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::coord::types::RangedCoordf64;
use plotters::style::text_anchor::{HPos, Pos, VPos};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// A ratio on a log₂ axis, bars from 1×.
    Ratio,
    /// A plain quantity from 0 (requests/s).
    Linear,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub value: f64,
    /// The lowest and highest value the bar sums up (a whisker), e.g. over workloads.
    pub range: Option<(f64, f64)>,
    /// Written beside the bar's end.
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    /// One per series, in the series' order; `None` is a measure that is missing, drawn as
    /// "not measured" rather than as nothing (which would read as zero).
    pub bars: Vec<Option<Bar>>,
}

/// A series' name in the legend and its colour (an index into the palette), so a framework
/// keeps one colour in every chart of its language.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: usize,
    /// What a missing bar of this series says: "not measured" for a run, "not published" for
    /// a reference figure.
    pub missing: &'static str,
}

impl Series {
    pub fn new(name: &str, color: usize) -> Series {
        Series { name: name.to_owned(), color, missing: "not measured" }
    }

    /// Names coloured by their position.
    pub fn numbered(names: &[String]) -> Vec<Series> {
        names.iter().enumerate().map(|(color, name)| Series::new(name, color)).collect()
    }
}

#[derive(Debug, Clone)]
pub struct BarChart {
    /// Also the SVG's accessible name.
    pub title: String,
    pub series: Vec<Series>,
    pub rows: Vec<Row>,
    pub scale: Scale,
}

/// Colours by series position, told apart by hue and lightness; the first series (Ferrule in
/// the language charts, the CPU ratio in the summary) gets the strongest.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0xc2, 0x41, 0x0c),
    RGBColor(0x03, 0x69, 0xa1),
    RGBColor(0x15, 0x80, 0x3d),
    RGBColor(0x7c, 0x3a, 0xed),
    RGBColor(0xa1, 0x62, 0x07),
    RGBColor(0x0f, 0x76, 0x6e),
    RGBColor(0xbe, 0x18, 0x5d),
    RGBColor(0x4b, 0x55, 0x63),
];
const GREY: RGBColor = RGBColor(0x6b, 0x72, 0x80);
const FONT: &str = "sans-serif";
/// plotters writes `font-size` as the size given ÷ 1.24; 14 is about 11 px on the page.
const TEXT: u32 = 14;

const ROW_GAP: u32 = 10;
/// One line of the legend.
const LEGEND_LINE: u32 = 18;
const AXIS: u32 = 26;

pub fn color(series: usize) -> RGBColor {
    PALETTE[series % PALETTE.len()]
}

impl BarChart {
    /// Thinner bars where a row holds many, so a language with six frameworks stays readable
    /// without a chart taller than the screen per few workloads.
    fn bar(&self) -> u32 {
        match self.series.len() {
            0..=2 => 13,
            3 => 10,
            _ => 8,
        }
    }

    fn row_height(&self) -> u32 {
        self.series.len().max(1) as u32 * self.bar() + ROW_GAP
    }

    /// Where each series' swatch goes in a chart `width` wide: left to right, onto a new line
    /// when the next name would not fit.
    fn legend(&self, width: u32) -> Vec<(i32, i32)> {
        let (mut x, mut line) = (8, 0);
        self.series
            .iter()
            .map(|s| {
                let wide = 16 + 7 * s.name.chars().count() as i32 + 18;
                if x > 8 && x + wide > width as i32 {
                    (x, line) = (8, line + 1);
                }
                let at = (x, 7 + line * LEGEND_LINE as i32);
                x += wide;
                at
            })
            .collect()
    }

    fn legend_height(&self, width: u32) -> u32 {
        self.legend(width).last().map_or(0, |(_, y)| *y as u32 + LEGEND_LINE + 2)
    }

    pub fn height(&self, width: u32) -> u32 {
        self.legend_height(width) + self.rows.len().max(1) as u32 * self.row_height() + AXIS
    }

    /// The x axis: for ratios a log range that holds every bar, whisker and 1× with room for
    /// the labels; for quantities 0 to a quarter past the largest.
    fn extent(&self) -> (f64, f64) {
        let values: Vec<f64> = self
            .rows
            .iter()
            .flat_map(|r| r.bars.iter().flatten())
            .flat_map(|b| [Some(b.value), b.range.map(|r| r.0), b.range.map(|r| r.1)])
            .flatten()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        match self.scale {
            Scale::Ratio => {
                let low = values.iter().copied().fold(1.0_f64, f64::min).min(0.5);
                let high = values.iter().copied().fold(1.0_f64, f64::max).max(2.0);
                // Room on each side for a value written past a bar's end.
                (low / 1.8, high * 2.2)
            }
            Scale::Linear => (0.0, values.iter().copied().fold(0.0_f64, f64::max).max(1.0) * 1.3),
        }
    }

    /// The chart as one `<svg>` element, `width` pixels wide.
    pub fn svg(&self, width: u32) -> String {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, self.height(width))).into_drawing_area();
            // Drawing into a string cannot fail short of a bug in the chart's own geometry; a
            // chart that failed is left as what was drawn, the page's tables still hold the numbers.
            let _ = self.draw(&root);
        }
        let label = super::escape(&self.title);
        svg.replacen("<svg ", &format!("<svg role=\"img\" aria-label=\"{label}\" "), 1)
    }

    fn draw(&self, root: &DrawingArea<SVGBackend, Shift>) -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        let text = TextStyle::from((FONT, TEXT).into_font());
        let width = root.dim_in_pixel().0;
        for (series, (x, y)) in self.series.iter().zip(self.legend(width)) {
            root.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], color(series.color).filled()))?;
            root.draw(&Text::new(series.name.clone(), (x + 16, y + 6), text.clone().pos(Pos::new(HPos::Left, VPos::Center))))?;
        }
        let n = self.rows.len().max(1);
        let label_width = self.rows.iter().map(|r| r.label.chars().count()).max().unwrap_or(4) as u32 * 7 + 14;
        let (low, high) = self.extent();
        let area = root.margin(self.legend_height(width), 0, 0, 12);
        let mut builder = ChartBuilder::on(&area);
        builder.x_label_area_size(AXIS).y_label_area_size(label_width);
        // Row i spans y from n - i - 1 to n - i, so the first row is drawn at the top.
        let y = 0.0..n as f64;
        let mesh = ShapeStyle::from(RGBColor(0xe5, 0xe7, 0xeb));
        match self.scale {
            Scale::Ratio => {
                let ticks: Vec<f64> = (-6..=8).map(|e| 2f64.powi(e)).filter(|t| *t >= low && *t <= high).collect();
                let mut chart = builder.build_cartesian_2d((low..high).log_scale().with_key_points(ticks), y)?;
                chart.configure_mesh().disable_y_mesh().y_labels(0).light_line_style(WHITE).bold_line_style(mesh).x_label_formatter(&|v| ratio_text(*v)).label_style(text.clone()).draw()?;
                chart.draw_series(std::iter::once(PathElement::new(vec![(1.0, 0.0), (1.0, n as f64)], GREY.stroke_width(1))))?;
                self.draw_bars(&mut chart, 1.0)?;
                self.draw_row_labels(root, &chart, low)?;
            }
            Scale::Linear => {
                let mut chart = builder.build_cartesian_2d(low..high, y)?;
                chart.configure_mesh().disable_y_mesh().y_labels(0).x_labels(6).light_line_style(WHITE).bold_line_style(mesh).x_label_formatter(&|v| quantity_text(*v)).label_style(text.clone()).draw()?;
                self.draw_bars(&mut chart, 0.0)?;
                self.draw_row_labels(root, &chart, low)?;
            }
        }
        Ok(())
    }

    /// Each row's name, right-aligned against the axis in the label area (drawn here rather
    /// than as the mesh's labels, which would fall on the rows' borders, not their middles).
    fn draw_row_labels<X: Ranged<ValueType = f64>>(&self, root: &DrawingArea<SVGBackend, Shift>, chart: &ChartContext<SVGBackend, Cartesian2d<X, RangedCoordf64>>, low: f64) -> Result<(), Box<dyn std::error::Error + '_>> {
        let n = self.rows.len();
        let style = TextStyle::from((FONT, TEXT).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, row) in self.rows.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(low, (n - i) as f64 - 0.5));
            root.draw(&Text::new(row.label.clone(), (x - 6, y), style.clone()))?;
        }
        Ok(())
    }

    fn draw_bars<X: Ranged<ValueType = f64>>(&self, chart: &mut ChartContext<SVGBackend, Cartesian2d<X, RangedCoordf64>>, base: f64) -> Result<(), Box<dyn std::error::Error + '_>> {
        let n = self.rows.len();
        let text = TextStyle::from((FONT, TEXT).into_font());
        // In y units a row is 1 high: its bars one under the other, half the gap above and below.
        let (bar_height, gap) = (self.bar() as f64 / self.row_height() as f64, ROW_GAP as f64 / self.row_height() as f64);
        let half = bar_height / 2.0 * 0.85;
        for (i, row) in self.rows.iter().enumerate() {
            let top = (n - i) as f64;
            for (s, bar) in row.bars.iter().enumerate() {
                let centre = top - gap / 2.0 - (s as f64 + 0.5) * bar_height;
                let Some(bar) = bar else {
                    let missing = self.series.get(s).map_or("not measured", |x| x.missing);
                    chart.draw_series(std::iter::once(
                        EmptyElement::at((base, centre)) + Text::new(missing, (4, 0), text.clone().color(&GREY).pos(Pos::new(HPos::Left, VPos::Center))),
                    ))?;
                    continue;
                };
                chart.draw_series(std::iter::once(Rectangle::new([(base, centre - half), (bar.value, centre + half)], color(self.series.get(s).map_or(s, |x| x.color)).filled())))?;
                if let Some((lo, hi)) = bar.range {
                    let style = RGBColor(0x11, 0x18, 0x27).stroke_width(1);
                    chart.draw_series([
                        PathElement::new(vec![(lo, centre), (hi, centre)], style),
                        PathElement::new(vec![(lo, centre - half * 0.7), (lo, centre + half * 0.7)], style),
                        PathElement::new(vec![(hi, centre - half * 0.7), (hi, centre + half * 0.7)], style),
                    ])?;
                }
                // The value past the bar's end (past its whisker when it has one), on the side
                // the bar grows to.
                let end = bar.range.map_or(bar.value, |(lo, hi)| if bar.value >= base { hi.max(bar.value) } else { lo.min(bar.value) });
                let (dx, anchor) = if bar.value >= base { (4, HPos::Left) } else { (-4, HPos::Right) };
                chart.draw_series(std::iter::once(EmptyElement::at((end, centre)) + Text::new(bar.label.clone(), (dx, 0), text.clone().pos(Pos::new(anchor, VPos::Center)))))?;
            }
        }
        Ok(())
    }
}

fn ratio_text(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}×")
    } else {
        format!("1/{:.0}×", 1.0 / v)
    }
}

fn quantity_text(v: f64) -> String {
    if v >= 1000.0 {
        format!("{}k", (v / 100.0).round() / 10.0)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn chart(scale: Scale, rows: Vec<Row>) -> BarChart {
        BarChart { title: "CPU <per> request & more".into(), series: Series::numbered(&["fastapi".into(), "robyn".into()]), rows, scale }
    }

    /// A text as the SVG backend writes it: on a line of its own inside its element.
    pub fn shown(text: &str) -> String {
        format!(">\n{text}\n</text>")
    }

    fn bar(value: f64) -> Option<Bar> {
        Some(Bar { value, range: None, label: format!("{value:.2}×") })
    }

    #[test]
    fn a_chart_is_one_svg_of_the_height_its_rows_need_and_the_same_bytes_each_time() {
        let c = chart(Scale::Ratio, vec![Row { label: "path-int".into(), bars: vec![bar(5.0), bar(0.8)] }, Row { label: "json-large".into(), bars: vec![bar(2.5), bar(1.2)] }]);
        let svg = c.svg(600);
        assert!(svg.starts_with("<svg role=\"img\" aria-label=\"CPU &lt;per&gt; request &amp; more\" width=\"600\""), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(&format!("height=\"{}\"", c.height(600))));
        for text in ["path-int", "json-large", "5.00×", "0.80×", "fastapi", "robyn", "1×", "1/2×", "2×"] {
            assert!(svg.contains(&shown(text)), "{text} in {svg}");
        }
        assert_eq!(svg, c.svg(600));
    }

    #[test]
    fn a_missing_bar_says_so() {
        let svg = chart(Scale::Linear, vec![Row { label: "path-int".into(), bars: vec![bar(30000.0), None] }]).svg(600);
        assert_eq!(svg.matches(&shown("not measured")).count(), 1, "{svg}");
        assert!(svg.contains(&shown("30000.00×")));
    }

    #[test]
    fn a_legend_too_wide_for_one_line_wraps() {
        let names: Vec<String> = ["ferrule-python-sync", "ferrule-python-async", "fastapi", "robyn", "granian", "spikard"].map(str::to_owned).to_vec();
        let c = BarChart { series: Series::numbered(&names), ..chart(Scale::Linear, vec![Row { label: "path-int".into(), bars: vec![bar(1.0); 6] }]) };
        let lines = |width| c.legend(width).iter().map(|(_, y)| *y).collect::<std::collections::BTreeSet<_>>().len();
        assert_eq!((lines(2000), lines(560)), (1, 2));
        assert!(c.legend(560).iter().all(|(x, _)| *x < 560 - 40));
        assert!(c.height(560) > c.height(2000));
    }

    #[test]
    fn labels_are_escaped() {
        let svg = chart(Scale::Ratio, vec![Row { label: "<script>alert(1)</script>".into(), bars: vec![bar(2.0), bar(3.0)] }]).svg(600);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
    }

    #[test]
    fn axis_labels_read_as_ratios_and_thousands() {
        assert_eq!((ratio_text(4.0), ratio_text(0.5), quantity_text(25_000.0), quantity_text(12.0)), ("4×".into(), "1/2×".into(), "25k".into(), "12".into()));
    }
}
