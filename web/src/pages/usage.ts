import { call } from '../api.ts';
import { h, svg } from '../dom.ts';
import { t } from '../i18n.ts';
import type { InvoiceItem } from './invoices.ts';

/** A bar chart: one bar per label, the value above it. */
function barChart(id: string, bars: [string, number][], color: string): SVGElement {
  const width = 640;
  const height = 200;
  const max = Math.max(1, ...bars.map(([, v]) => v));
  const step = width / Math.max(1, bars.length);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 30}`, class: 'chart', id, role: 'img' });
  bars.forEach(([label, value], i) => {
    const barHeight = (value / max) * (height - 20);
    const x = i * step + step * 0.15;
    chart.append(
      svg('rect', { x, y: height - barHeight, width: step * 0.7, height: barHeight, fill: color }),
      svg(
        'text',
        { x: x + step * 0.35, y: height - barHeight - 4, 'text-anchor': 'middle', 'font-size': 12 },
        String(value),
      ),
      svg('text', { x: x + step * 0.35, y: height + 16, 'text-anchor': 'middle', 'font-size': 11 }, label),
    );
  });
  return chart;
}

/** Notes per day (last 14 days) and errors per engine, from the project's latest 200 invoices. */
export async function usageTab(projectId: string): Promise<HTMLElement> {
  const { items } = await call<{ items: InvoiceItem[] }>('GET', `/projects/${projectId}/invoices?limit=200`);
  const days: [string, number][] = [];
  for (let i = 13; i >= 0; i--) {
    const day = new Date(Date.now() - i * 86_400_000).toISOString().slice(0, 10);
    days.push([day.slice(5), items.filter((x) => x.createdAt.slice(0, 10) === day && x.status !== 'error').length]);
  }
  const errors = new Map<string, number>();
  for (const x of items) if (x.status === 'error') errors.set(x.engine, (errors.get(x.engine) ?? 0) + 1);
  return h(
    'div',
    { id: 'usage' },
    h('div', { class: 'card' }, h('h2', {}, t('usage.perDay')), barChart('chart-per-day', days, '#2b6cb0')),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, t('usage.errors')),
      errors.size === 0
        ? h('p', { class: 'muted' }, t('usage.noErrors'))
        : barChart('chart-errors', [...errors], '#c53030'),
    ),
    h('p', { class: 'muted' }, t('usage.basis', { n: items.length })),
  );
}
