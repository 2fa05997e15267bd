package report

// pageCSS is the one stylesheet of report.html and history.html, inlined
// into each page's <style> (their Content-Security-Policy allows inline
// CSS and nothing else), so that the two pages look alike and a change of
// style is made once.
// pageHead is the start of both pages, report.html and history.html, up
// to <body>: a content security policy that allows inline CSS and nothing
// else, the viewport, the title (a template text) and the stylesheet.
func pageHead(title string) string {
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + title + `</title>
<style>
` + pageCSS + `</style>
</head>
<body>
`
}

const pageCSS = `:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: #1b1f24; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.wrap { max-width: 1060px; margin: 0 auto; padding: 16px 24px 40px; }
h1 { font-size: 1.6rem; margin: 8px 0 12px; }
h2 { font-size: 1.2rem; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
.banner { background: #b3261e; color: #ffffff; padding: 14px 24px; font-size: 1.15rem; }
.banner strong { font-size: 1.35rem; letter-spacing: 0.04em; margin-right: 8px; }
.verdict { border-left: 10px solid; padding: 12px 16px; margin: 8px 0 16px; }
.verdict .word { font-size: 1.7rem; font-weight: 700; letter-spacing: 0.03em; }
.verdict.ok { border-color: #1a7f37; background: #e9f6ec; }
.verdict.bad { border-color: #b3261e; background: #fbeaea; }
.verdict.warn { border-color: #bf6a02; background: #fff4e0; }
.verdict.info { border-color: #1d4e89; background: #eef4fb; }
.verdict ul { margin: 6px 0 0; padding-left: 20px; }
.totals { margin: 4px 0 0; }
.chart { display: block; max-width: 100%; height: auto; }
.chart text { font: 13px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #1b1f24; }
.chart .tick { fill: #57606a; font-size: 12px; }
.chart .grid { stroke: #e4e8ec; stroke-width: 1; }
.chart .axis { stroke: #8c959f; stroke-width: 1; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; font-size: 0.92rem; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, .hash { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.85rem; }
.hash { word-break: break-all; min-width: 17em; }
.loc { color: #57606a; word-break: break-all; }
.id { white-space: nowrap; }
.good { color: #1a7f37; font-weight: 600; }
.badv { color: #b3261e; font-weight: 700; }
.warnv { color: #bf6a02; font-weight: 700; }
.badge { display: inline-block; background: #6e7781; color: #ffffff; border-radius: 4px; padding: 1px 7px; font-size: 0.75rem; font-weight: 600; vertical-align: middle; letter-spacing: 0.03em; text-transform: uppercase; }
.note { color: #57606a; }
.nonnormative { border: 1px dashed #8c959f; padding: 4px 14px 10px; margin-top: 16px; background: #fafbfc; }
.rule { font-size: 0.85rem; color: #424a53; }
.baseline-list code { overflow-wrap: anywhere; word-break: break-word; }
.baseline-list { table-layout: fixed; }
footer { margin-top: 32px; color: #57606a; font-size: 0.85rem; }
@media print { .banner { -webkit-print-color-adjust: exact; print-color-adjust: exact; } }
`
