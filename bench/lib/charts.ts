// A small SVG writer for the scaling charts: two panels (throughput, p99) against load, one line per series.
// Plain strings, no dependencies; the input is report.ts's ScaleChart, so any benchmark can emit points.
import type { ScaleChart, ScalePoint } from './report';

const panelWidth = 360;
const panelHeight = 220;
const margin = { left: 58, right: 16, top: 34, bottom: 44 };
const colours = ['#1f6feb', '#9a6700', '#cf222e', '#1a7f37', '#8250df', '#57606a'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** About five round tick values from 0 (or lo) to at least hi. */
function ticks(lo: number, hi: number): number[] {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  if (out.at(-1)! < hi) out.push(Number((out.at(-1)! + step).toPrecision(12)));
  return out;
}

/** Powers of ten covering [lo, hi] for a log axis. */
function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); 10 ** e <= hi * 1.0001 || out.length < 2; e++) out.push(10 ** e);
  return out;
}

const label = (v: number) => (Math.abs(v) >= 10_000 ? `${Number((v / 1000).toPrecision(3))}k` : Number(v.toPrecision(4)).toString());

function panel(chart: ScaleChart, pick: (p: ScalePoint) => number | undefined, yLabel: string, x0: number, series: string[]): string {
  const pts = chart.points.filter((p) => Number.isFinite(pick(p)));
  const out: string[] = [`<g transform="translate(${x0},0)">`];
  const w = panelWidth - margin.left - margin.right;
  const h = panelHeight - margin.top - margin.bottom;
  out.push(`<text x="${margin.left + w / 2}" y="20" text-anchor="middle" font-weight="bold">${esc(yLabel)}</text>`);
  if (pts.length === 0) {
    out.push(`<text x="${margin.left + w / 2}" y="${margin.top + h / 2}" text-anchor="middle" fill="#57606a">no data</text></g>`);
    return out.join('');
  }
  const loads = pts.map((p) => p.load);
  const log = chart.logLoad === true && Math.min(...loads) > 0;
  const xt = log ? logTicks(Math.min(...loads), Math.max(...loads)) : ticks(Math.min(0, ...loads), Math.max(...loads));
  const yt = ticks(0, Math.max(...pts.map((p) => pick(p)!)));
  const [xLo, xHi] = [xt[0]!, xt.at(-1)!];
  const sx = (v: number) => margin.left + (log ? (Math.log10(v) - Math.log10(xLo)) / (Math.log10(xHi) - Math.log10(xLo)) : (v - xLo) / (xHi - xLo)) * w;
  const sy = (v: number) => margin.top + h - (v / yt.at(-1)!) * h;
  for (const v of yt) {
    out.push(`<line x1="${margin.left}" x2="${margin.left + w}" y1="${sy(v)}" y2="${sy(v)}" stroke="#d0d7de"/>`);
    out.push(`<text x="${margin.left - 6}" y="${sy(v) + 4}" text-anchor="end">${label(v)}</text>`);
  }
  for (const v of xt) out.push(`<text x="${sx(v)}" y="${margin.top + h + 16}" text-anchor="middle">${label(v)}</text>`);
  out.push(`<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + h}" stroke="#57606a"/>`);
  out.push(`<line x1="${margin.left}" x2="${margin.left + w}" y1="${margin.top + h}" y2="${margin.top + h}" stroke="#57606a"/>`);
  out.push(`<text x="${margin.left + w / 2}" y="${panelHeight - 8}" text-anchor="middle">${esc(chart.loadLabel)}${log ? ' (log)' : ''}</text>`);
  series.forEach((name, i) => {
    const line = pts.filter((p) => p.series === name).sort((a, b) => a.load - b.load);
    if (line.length === 0) return;
    const colour = colours[i % colours.length];
    const xy = line.map((p) => `${sx(p.load).toFixed(1)},${sy(pick(p)!).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${xy.join(' ')}"/>`);
    for (const p of line)
      out.push(`<circle cx="${sx(p.load).toFixed(1)}" cy="${sy(pick(p)!).toFixed(1)}" r="3" fill="${colour}"><title>${esc(`${name}: ${label(pick(p)!)} at ${label(p.load)}`)}</title></circle>`);
  });
  out.push('</g>');
  return out.join('');
}

/** The chart as a standalone SVG document: throughput on the left, p99 on the right, a legend of the series below. */
export function scaleChartSvg(chart: ScaleChart): string {
  const series = [...new Set(chart.points.map((p) => p.series))];
  const width = panelWidth * 2;
  const height = panelHeight + 44 + 18 * Math.ceil(series.length / 4);
  const legend = series.map((name, i) => {
    const x = 20 + (i % 4) * 175;
    const y = panelHeight + 44 + 18 * Math.floor(i / 4) - 10;
    return `<rect x="${x}" y="${y - 9}" width="14" height="4" fill="${colours[i % colours.length]}"/><text x="${x + 20}" y="${y - 4}">${esc(name)}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<g transform="translate(0,22)">`,
    panel(chart, (p) => p.throughput, chart.throughputLabel, 0, series),
    panel(chart, (p) => p.p99Ms, 'p99 (ms)', panelWidth, series),
    '</g>',
    `<text x="${width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${esc(chart.title)}</text>`,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** The file a chart is written to, beside the report named `base` (e.g. `latest-search-scale-latency.svg`). */
export const chartFileName = (base: string, bench: string, chart: ScaleChart) => `${base}-${bench}-${chart.id}.svg`;
