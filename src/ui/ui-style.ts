/** The UI's one stylesheet, served inline (a few rules; no build step, nothing fetched). */
export const UI_STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f7f8fa}
nav{display:flex;gap:18px;align-items:center;padding:10px 20px;background:#1d2330}
nav a{color:#dfe6f3;text-decoration:none}nav .brand{font-weight:700;color:#fff}nav form{margin-left:auto}
main{padding:16px 24px;max-width:1280px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #dde2ea;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f6}.num{text-align:right;font-variant-numeric:tabular-nums}
.counters{display:flex;flex-wrap:wrap;gap:10px}.counter{background:#fff;border:1px solid #dde2ea;padding:8px 12px;min-width:90px}
.counter b{display:block;font-size:20px}.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{background:#fff;border:1px solid #dde2ea;padding:6px}
.turn{background:#fff;border:1px solid #dde2ea;margin:12px 0;padding:10px 14px}
.turn h3{margin:0 0 6px;font-size:15px}pre{white-space:pre-wrap;word-break:break-word;background:#f2f4f8;padding:8px;margin:4px 0}
.verdict{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;background:#7a8494}
.verdict.correct{background:#1f8a4c}.verdict.wrong{background:#c0392b}.verdict.no_answer{background:#b9770e}
.status{font-weight:600}.status.failed{color:#c0392b}.status.completed{color:#1f8a4c}.status.running{color:#1d5fbf}
.strip{display:flex;height:12px;margin:4px 0;border:1px solid #ccd}.strip span{flex:1 1 0;min-width:0}
.feedback{background:#fff7e0}.reasoning summary{cursor:pointer;color:#55607a}
.tokens span{display:inline-block;margin:1px;padding:0 2px;border-radius:2px;font:12px monospace;white-space:pre}
.tokens .prompt{background:#e8ebf0}.tokens .feedback-token{background:#fff0c2}
.legend span{display:inline-block;width:14px;height:10px;margin:0 3px}
.flag{color:#c0392b;font-weight:600}.muted{color:#6b7486}
`;
