//! report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) that
//! leads with the summary, so what a reader came for is in the first screen:
//!
//! * `#summary`: one card per language, a chart of Ferrule against each peer (geometric mean
//!   over the workloads, whiskers from the lowest to the highest) and its budgets' verdicts;
//! * `section.language`, one per language: the ratios workload by workload and requests/s as
//!   charts, their numbers folded beneath;
//! * streams, features, what could not be measured;
//! * `#all-results`: the full table in a closed `<details>`, then the run's details.

use super::budgets::Budget;
use super::charts::{Bar, BarChart, Row, Scale, Series};
use super::summary::Language;
use super::{cell, escape, tables, workloads, Report};
use std::fmt::Write;

/// Chart widths in pixels: two summary cards or two language charts side by side fill the
/// page's 1200 px; narrower screens scale them down (`max-width: 100%`).
const CARD_WIDTH: u32 = 570;

const STYLE: &str = "\
body{font-family:system-ui,sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#111}\
h1{margin:0 0 .2em}h2{margin:1.6em 0 .4em;border-bottom:1px solid #ddd}h3{margin:.2em 0 .4em;font-size:1.05em}\
.run,.how,.note{color:#444;font-size:14px;margin:.3em 0}\
.cards,.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px;align-items:start}\
.card{border:1px solid #ddd;border-radius:6px;padding:10px 12px}\
.card h3 span{font-weight:normal;color:#555}\
figure{margin:0}figcaption{font-size:14px;margin-bottom:4px}\
svg{display:block;max-width:100%;height:auto}\
ul.budgets{list-style:none;padding:0;margin:.5em 0 0;font-size:13px}ul.budgets li{margin:.25em 0}\
.verdict{display:inline-block;min-width:6.5em;font-weight:bold}\
.holds{color:#15803d}.missed{color:#b91c1c}.noise{color:#a16207}.unjudged{color:#6b7280}\
.none{color:#6b7280;font-style:italic}\
details{margin:1em 0}summary{cursor:pointer;font-weight:bold}\
table{border-collapse:collapse;margin:.6em 0;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}.meta{font-size:13px;color:#444}";

pub fn html(report: &Report) -> String {
    let mut body = String::new();
    let _ = write!(body, "<header><h1>Ferrule benchmark report</h1><p class=\"run\">{}</p></header>", escape(&tables::run_line(report.set)));
    body.push_str(&summary(report));
    for language in &report.languages {
        body.push_str(&language_section(report, language));
    }
    for (id, markdown) in [("streams", tables::streams(report.set)), ("features", tables::features(report.set)), ("not-measured", tables::not_measured(report.set))] {
        if !markdown.is_empty() {
            let _ = write!(body, "<section id=\"{id}\">{}</section>", markdown_as_html(&markdown));
        }
    }
    let table = tables::all_results(report.set);
    let rows = table.lines().filter(|l| l.starts_with('|')).count().saturating_sub(2);
    let _ = write!(
        body,
        "<details id=\"all-results\"><summary>All results: every framework × workload, {rows} rows (req/s, of ceiling, latency, CPU-µs/req and its kernel share, failures, sizes, startup, RSS)</summary>{}</details>",
        markdown_as_html(table.split_once('\n').map_or("", |(_, rest)| rest))
    );
    let _ = write!(body, "<details id=\"run\"><summary>The run: machine, tools, versions</summary>{}</details>", markdown_as_html(&tables::run_details(report.set)));
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>Ferrule benchmark report</title><style>{STYLE}</style></head><body>{body}</body></html>\n"
    )
}

fn figure(chart: &BarChart, width: u32) -> String {
    format!("<figure><figcaption>{}</figcaption>{}</figure>", escape(&chart.title), chart.svg(width))
}

fn budget_list(budgets: &[&Budget]) -> String {
    if budgets.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"budgets\">");
    for b in budgets {
        let shown = b.overall();
        let _ = write!(
            out,
            "<li class=\"{}\"><span class=\"verdict\">{}</span> <span class=\"promise\">#{} {}</span>: <span class=\"detail\">{}</span></li>",
            shown.class(),
            shown.text(),
            b.number,
            escape(&b.promise),
            escape(&b.verdict())
        );
    }
    out.push_str("</ul>");
    out
}

/// Ferrule against each peer over the workloads: one row per peer, the CPU ratio and the
/// requests/s ratio as two bars, each with its lowest-to-highest whisker.
pub fn summary_chart(language: &Language) -> Option<BarChart> {
    let ours = language.ferrule.as_ref()?;
    if language.comparisons.is_empty() {
        return None;
    }
    let bar = |s: Option<super::summary::Spread>| s.map(|s| Bar { value: s.mean, range: (s.count > 1).then_some((s.low, s.high)), label: format!("{:.2}×", s.mean) });
    Some(BarChart {
        title: format!("{}: {ours} against each peer, over the HTTP workloads (> 1× Ferrule ahead)", language.name),
        series: Series::numbered(&["CPU-µs/req: peer ÷ Ferrule".into(), "req/s: Ferrule ÷ peer".into()]),
        rows: language.comparisons.iter().map(|c| Row { label: c.peer.clone(), bars: vec![bar(c.cpu()), bar(c.rps())] }).collect(),
        scale: Scale::Ratio,
    })
}

fn summary(report: &Report) -> String {
    let mut out = String::from("<section id=\"summary\"><h2>Summary: Ferrule against its peers</h2>");
    let _ = write!(
        out,
        "<p class=\"how\">Each bar is a geometric mean over the HTTP workloads both served, the whisker runs from the lowest workload to the highest; right of 1× Ferrule is ahead. CPU per request is the steady measure on a shared machine.</p><div class=\"cards\">"
    );
    for language in &report.languages {
        let _ = write!(out, "<article class=\"card\" data-language=\"{}\"><h3>{}", language.key, escape(language.name));
        if let Some(f) = &language.ferrule {
            let _ = write!(out, " <span>{} against its peers</span>", escape(f));
        }
        out.push_str("</h3>");
        match (summary_chart(language), tables::no_comparison(language)) {
            (Some(chart), _) => out.push_str(&chart.svg(CARD_WIDTH - 26)),
            (None, why) => {
                let _ = write!(out, "<p class=\"none\">{}</p>", escape(&why.unwrap_or_default()));
            }
        }
        out.push_str(&budget_list(&report.budgets_of(language.key)));
        out.push_str("</article>");
    }
    let _ = write!(out, "</div><p class=\"note\">{}</p></section>", escape(&tables::budgets_note(report)));
    out
}

/// A language's charts: the ratio to each peer per workload, requests/s of each of its
/// frameworks per workload, and for Python its cost over Rust beside the reference framework's.
pub fn language_charts(report: &Report, language: &Language) -> Vec<BarChart> {
    let mut charts = Vec::new();
    if let (Some(ours), Some(first)) = (&language.ferrule, language.comparisons.first()) {
        charts.push(BarChart {
            title: format!("{}: peer CPU-µs/req ÷ {ours}'s, per workload (> 1× Ferrule ahead)", language.name),
            // Each peer in the colour it has in the requests/s chart beside.
            series: language.comparisons.iter().map(|c| Series::new(&c.peer, language.members.iter().position(|m| *m == c.peer).unwrap_or(0))).collect(),
            rows: first
                .workloads
                .iter()
                .map(|(w, _)| Row { label: w.clone(), bars: language.comparisons.iter().map(|c| c.on(w).map(|r| Bar { value: r.cpu, range: None, label: format!("{:.2}×", r.cpu) })).collect() })
                .collect(),
            scale: Scale::Ratio,
        });
    }
    let http: Vec<String> = workloads(report.set).into_iter().filter(|w| !crate::stream::is_stream(w)).collect();
    let rows: Vec<Row> = http
        .iter()
        .filter(|w| language.members.iter().any(|f| cell(report.set, f, w).is_some()))
        .map(|w| Row {
            label: w.clone(),
            bars: language.members.iter().map(|f| cell(report.set, f, w).map(|c| Bar { value: c.rps, range: None, label: format!("{:.0}", c.rps) })).collect(),
        })
        .collect();
    if !rows.is_empty() {
        charts.push(BarChart { title: format!("{}: requests/s per workload (higher is better)", language.name), series: Series::numbered(&language.members), rows, scale: Scale::Linear });
    }
    if language.key == "python" {
        let rows = tables::ratio_rows(report);
        if !rows.is_empty() {
            let bar = |x: Option<f64>| x.map(|v| Bar { value: v, range: None, label: format!("{v:.2}×") });
            charts.push(BarChart {
                title: format!("Python: how much more a request costs in Python than in Rust (lower is better), beside {}'s published Rust ÷ Python req/s", tables::reference_name(report)),
                series: vec![
                    Series::new("sync: Python ÷ Rust CPU-µs/req", 0),
                    Series::new("async: Python ÷ Rust CPU-µs/req", 1),
                    Series { missing: "not published", ..Series::new(&format!("{}: Rust ÷ Python req/s", tables::reference_name(report)), 2) },
                ],
                rows: rows.iter().map(|r| Row { label: r.workload.clone(), bars: vec![bar(r.sync_ratio()), bar(r.async_ratio()), bar(r.reference)] }).collect(),
                scale: Scale::Ratio,
            });
        }
    }
    charts
}

fn language_section(report: &Report, language: &Language) -> String {
    let mut out = format!("<section class=\"language\" id=\"language-{0}\" data-language=\"{0}\"><h2>{1}</h2><div class=\"charts\">", language.key, escape(language.name));
    for chart in language_charts(report, language) {
        out.push_str(&figure(&chart, CARD_WIDTH));
    }
    out.push_str("</div>");
    let numbers = tables::language_section(report, language);
    let numbers = numbers.split_once('\n').map_or("", |(_, rest)| rest);
    if numbers.contains('|') {
        let _ = write!(out, "<details class=\"numbers\"><summary>The numbers behind {}'s charts, and its budgets workload by workload</summary>{}</details>", escape(language.name), markdown_as_html(numbers));
    }
    out.push_str("</section>");
    out
}

/// The Markdown the tables module writes, as HTML: headings, paragraphs, list items, tables.
/// Every text is escaped; `**` and backticks are dropped rather than interpreted.
pub fn markdown_as_html(markdown: &str) -> String {
    let mut html = String::new();
    let mut in_table = false;
    let plain = |text: &str| escape(&text.replace("**", "").replace('`', ""));
    for line in markdown.lines() {
        if line.starts_with('|') {
            if line.starts_with("|---") {
                continue;
            }
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                html.push_str("<table>");
                in_table = true;
            }
            html.push_str("<tr>");
            for c in cells {
                let _ = write!(html, "<{tag}>{}</{tag}>", plain(c));
            }
            html.push_str("</tr>");
            continue;
        }
        if in_table {
            html.push_str("</table>");
            in_table = false;
        }
        if let Some(h) = line.strip_prefix("### ") {
            let _ = write!(html, "<h3>{}</h3>", plain(h));
        } else if let Some(h) = line.strip_prefix("## ") {
            let _ = write!(html, "<h2>{}</h2>", plain(h));
        } else if let Some(h) = line.strip_prefix("# ") {
            let _ = write!(html, "<h1>{}</h1>", plain(h));
        } else if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("  - ")) {
            let _ = write!(html, "<div class=\"meta\">{}</div>", plain(item));
        } else if !line.trim().is_empty() {
            let _ = write!(html, "<p>{}</p>", plain(line));
        }
    }
    if in_table {
        html.push_str("</table>");
    }
    html
}
