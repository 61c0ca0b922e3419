/** The page's whole stylesheet: system fonts, light and dark, one column at 360 px. */
export const STATUS_CSS = `
:root{color-scheme:light dark;--bg:#f7f7f5;--card:#fff;--fg:#1c1d1f;--muted:#5f6368;--line:#dedede;
--pass:#137333;--pass-bg:#e6f4ea;--warn:#8a5a00;--warn-bg:#fef3d6;--fail:#b3261e;--fail-bg:#fce8e6;--link:#0b57d0;--btn:#eef1f5}
@media (prefers-color-scheme:dark){:root{--bg:#121315;--card:#1c1d20;--fg:#e6e6e6;--muted:#a0a4aa;--line:#33363b;
--pass:#81c995;--pass-bg:#17301f;--warn:#fdd663;--warn-bg:#3a3014;--fail:#f28b82;--fail-bg:#3c1b19;--link:#8ab4f8;--btn:#2a2d32}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--link)}
header.top{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--card)}
header.top h1{font-size:1.05rem;margin:0;overflow-wrap:anywhere}
header.top h1 .host{font-weight:400;color:var(--muted)}
header.top nav{display:flex;gap:.8rem}
header.top .generated{color:var(--muted);font-size:.85rem;margin-left:auto}
main{max-width:72rem;margin:0 auto;padding:.75rem;display:grid;gap:.75rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr))}
main.single{grid-template-columns:1fr}
section.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem;min-width:0}
section.card h2{font-size:.95rem;margin:0 0 .4rem;display:flex;gap:.5rem;align-items:baseline;flex-wrap:wrap}
section.card h2 .summary{font-weight:400;color:var(--muted);font-size:.85rem}
.wide{grid-column:1/-1}
.empty,.note{color:var(--muted);margin:.2rem 0}
.error{color:var(--fail)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.875rem}
th,td{text-align:left;padding:.25rem .5rem .25rem 0;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:500;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.text{overflow-wrap:anywhere;min-width:8rem}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
.pill{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;font-weight:600;white-space:nowrap;background:var(--btn)}
.tone-pass{color:var(--pass);background:var(--pass-bg)}
.tone-warn{color:var(--warn);background:var(--warn-bg)}
.tone-fail{color:var(--fail);background:var(--fail-bg)}
.overall{font-size:1.1rem;padding:.1rem .7rem}
ul.why{margin:.3rem 0 .5rem;padding-left:1.1rem}
dl.facts{display:grid;align-items:baseline;grid-template-columns:max-content 1fr;gap:.15rem .8rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
form.actions{display:flex;flex-wrap:wrap;gap:.35rem;margin:0}
button{font:inherit;font-size:.85rem;padding:.2rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--btn);color:var(--fg);cursor:pointer}
button:hover{border-color:var(--muted)}
button:disabled{opacity:.5;cursor:progress}
button.danger{color:var(--fail)}
ul.approvals{list-style:none;margin:0;padding:0;display:grid;gap:.5rem}
ul.approvals li{border-bottom:1px solid var(--line);padding-bottom:.5rem}
ol.argv{margin:.2rem 0 0;padding-left:2rem;font-size:.8rem}
ol.argv li{border:0;padding:0;margin:.1rem 0}
ol.argv code{white-space:pre;border:1px solid var(--line);border-radius:3px;padding:0 .25rem}
mark.redacted{background:var(--warn-bg);color:var(--fg);outline:1px solid var(--warn);border-radius:3px}
.meta{color:var(--muted);font-size:.85rem;margin:.3rem 0 0}
.result,.approval-result{font-weight:600;margin:.3rem 0 0}
.approval-error{color:var(--fail)}
.banner{position:sticky;top:0;z-index:1;margin:0;padding:.6rem 1rem;background:var(--fail-bg);color:var(--fail);border-bottom:1px solid var(--fail);font-weight:600}
body.offline main{opacity:.5;filter:grayscale(1)}
.pager{display:flex;gap:1rem;align-items:center;margin:.6rem 0 0;flex-wrap:wrap}
.filters{display:flex;gap:.6rem;flex-wrap:wrap;margin:0 0 .5rem}
.filters a[aria-current]{font-weight:700;text-decoration:none;color:var(--fg)}
ol.timeline{margin:0;padding-left:1.2rem}
ol.timeline li{margin:.15rem 0}
pre.details{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.5rem;margin:.4rem 0 0;font-size:.8rem}
form.login{display:grid;gap:.5rem;max-width:24rem}
form.login input{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
section.verdict{border-radius:8px;padding:.5rem .8rem;border:1px solid currentColor}
section.verdict p{margin:0;font-size:1.05rem}
section.verdict ul.why{margin:.3rem 0 0}
section.card.attention-warn{border:2px solid var(--warn)}
.why-asked q{font-style:italic}
ol.transcript{list-style:none;margin:0;padding:0;display:grid;gap:.5rem}
ol.transcript li{border-bottom:1px solid var(--line);padding-bottom:.4rem}
ol.transcript .role{font-weight:600;text-transform:uppercase;font-size:.75rem;color:var(--muted)}
.history{display:inline-flex;gap:2px;vertical-align:middle}
.history .cell{display:inline-block;width:.5rem;height:1rem;border-radius:2px;border:1px solid currentColor}
.history .cell.tone-fail{background:var(--fail)}
.history .cell.tone-pass{background:var(--pass)}
.history .cell.tone-warn{background:var(--warn)}
.silenced{color:var(--warn)}
li.tool-call.failed{border-left:3px solid var(--fail);padding-left:.4rem}
.waiting{border:2px solid var(--warn);border-radius:8px;padding:.4rem .6rem;margin:.4rem 0}
ul.plain{margin:0;padding-left:1rem}
footer{color:var(--muted);font-size:.8rem;text-align:center;padding:0 1rem 1rem}
@media (max-width:480px){main{padding:.4rem;gap:.5rem}.opt{display:none}td.text{min-width:6rem}header.top .generated{margin-left:0}th,td{padding-right:.35rem}}
`;
