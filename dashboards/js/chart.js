// The time-series chart: one SVG line per metric, axes with round ticks, a legend that
// toggles lines, and hover values. Colours come from CSS (light and dark schemes).
import { h, svg, replace } from './dom.js';
import { bucketLabel, bucketTitle, formatCount } from './format.js';

export const SERIES = [
  { key: 'clicks', label: 'Clicks' },
  { key: 'installs_from_links', label: 'Installs from links' },
  { key: 'installs_organic', label: 'Organic installs' },
  { key: 'opens_from_links', label: 'Opens from links' },
  { key: 'fallbacks', label: 'Fallbacks' },
];

const HEIGHT = 260;
const INTERVAL_MS = { hour: 3_600_000, day: 86_400_000 };

/** Whether a bucket (its start `t`, with offset) has not ended at `now` (ms); a day is taken
 * as 24 hours, so on a day the clocks change the bucket is partial an hour more or less. */
export function isPartial(point, interval, now) {
  return point !== undefined && Date.parse(point.t) + INTERVAL_MS[interval] > now;
}
const MARGIN = { top: 12, right: 14, bottom: 28, left: 52 };

/** Round tick values from 0 to at least `max` (about five). */
export function ticks(max) {
  if (max <= 0) return [0, 1];
  const rough = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  const values = [];
  for (let v = 0; v < max + step; v += step) values.push(Math.round(v * 1000) / 1000);
  return values;
}

export class Chart {
  constructor(container, legend) {
    this.container = container;
    this.legend = legend;
    this.hidden = new Set();
    this.points = [];
    this.interval = 'day';
    /** The clock that says which bucket is still running. */
    this.now = () => Date.now();
    new ResizeObserver(() => this.draw()).observe(container);
  }

  /** Shows new points (the timeseries API's `points`). */
  update(points, interval) {
    this.points = points;
    this.interval = interval;
    this.drawLegend();
    this.draw();
  }

  drawLegend() {
    replace(this.legend, ...SERIES.map(({ key, label }) => h('button', {
      type: 'button',
      class: `legend-item series-${key}`,
      'aria-pressed': String(!this.hidden.has(key)),
      onclick: () => {
        if (this.hidden.has(key)) this.hidden.delete(key); else this.hidden.add(key);
        this.drawLegend();
        this.draw();
      },
    }, h('span', { class: 'swatch' }), label)));
  }

  draw() {
    const width = Math.max(this.container.clientWidth, 280);
    const { points, interval } = this;
    const visible = SERIES.filter(({ key }) => !this.hidden.has(key));
    const plotWidth = width - MARGIN.left - MARGIN.right;
    const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
    const max = Math.max(0, ...points.flatMap((p) => visible.map(({ key }) => p.metrics[key])));
    const yTicks = ticks(max);
    const top = yTicks[yTicks.length - 1];
    const x = (i) => MARGIN.left + (points.length <= 1 ? plotWidth / 2 : (i * plotWidth) / (points.length - 1));
    const y = (v) => MARGIN.top + plotHeight - (v / top) * plotHeight;

    const root = svg('svg', {
      class: 'chart-svg', width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img',
      'aria-label': `${SERIES.map((s) => s.label).join(', ')} per ${interval}`,
    });
    for (const value of yTicks) {
      root.append(
        svg('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(value), y2: y(value) }),
        svg('text', { class: 'axis', x: MARGIN.left - 8, y: y(value) + 4, 'text-anchor': 'end' }, formatCount(value)),
      );
    }
    const labelCount = Math.max(2, Math.min(points.length, Math.floor(plotWidth / 90)));
    const every = Math.max(1, Math.ceil(points.length / labelCount));
    points.forEach((point, i) => {
      if (i % every !== 0) return;
      // The rightmost label ends at the plot's edge rather than spilling past the chart.
      const anchor = i === points.length - 1 && points.length > 1 ? 'end' : 'middle';
      root.append(svg('text', { class: 'axis', x: x(i), y: HEIGHT - 8, 'text-anchor': anchor }, bucketLabel(point.t, interval)));
    });
    // The bucket still running (it holds now) is partial: its segment is dashed, and its
    // tooltip says so, rather than reading as a fall.
    const partial = isPartial(points[points.length - 1], interval, this.now());
    const solidEnd = partial && points.length > 1 ? points.length - 1 : points.length;
    const path = (from, to, key) => points.slice(from, to)
      .map((p, n) => `${n === 0 ? 'M' : 'L'}${x(from + n).toFixed(1)},${y(p.metrics[key]).toFixed(1)}`).join('');
    for (const { key } of visible) {
      root.append(svg('path', { class: `line series-${key}`, d: path(0, solidEnd, key) }));
      if (solidEnd < points.length) {
        root.append(svg('path', { class: `line partial series-${key}`, d: path(solidEnd - 1, points.length, key) }));
      }
    }

    // Hover: the nearest bucket's values in a tooltip, a guide line and dots.
    const guide = svg('line', { class: 'guide', y1: MARGIN.top, y2: MARGIN.top + plotHeight, visibility: 'hidden' });
    const dots = visible.map(({ key }) => svg('circle', { class: `dot series-${key}`, r: 3.5, visibility: 'hidden' }));
    const tooltip = h('div', { class: 'tooltip', hidden: true });
    const overlay = svg('rect', {
      class: 'overlay', x: MARGIN.left, y: MARGIN.top, width: plotWidth, height: plotHeight,
    });
    const show = (event) => {
      if (points.length === 0) return;
      const bounds = root.getBoundingClientRect();
      const offset = event.clientX - bounds.left - MARGIN.left;
      const i = Math.max(0, Math.min(points.length - 1, Math.round((offset / plotWidth) * (points.length - 1))));
      const point = points[i];
      guide.setAttribute('x1', x(i));
      guide.setAttribute('x2', x(i));
      guide.setAttribute('visibility', 'visible');
      visible.forEach(({ key }, n) => {
        dots[n].setAttribute('cx', x(i));
        dots[n].setAttribute('cy', y(point.metrics[key]));
        dots[n].setAttribute('visibility', 'visible');
      });
      replace(tooltip,
        h('strong', {}, bucketTitle(point.t, interval)),
        partial && i === points.length - 1 && h('div', { class: 'muted' }, 'so far (this period is not over)'),
        ...visible.map(({ key, label }) => h('div', { class: `tooltip-row series-${key}` },
          h('span', { class: 'swatch' }), `${label}: `, h('b', {}, formatCount(point.metrics[key])))));
      tooltip.hidden = false;
      const left = Math.min(x(i) + 12, width - 170);
      tooltip.style.left = `${Math.max(0, left)}px`;
      tooltip.style.top = `${MARGIN.top}px`;
    };
    const hide = () => {
      guide.setAttribute('visibility', 'hidden');
      dots.forEach((dot) => dot.setAttribute('visibility', 'hidden'));
      tooltip.hidden = true;
    };
    overlay.addEventListener('pointermove', show);
    overlay.addEventListener('pointerleave', hide);
    root.append(guide, ...dots, overlay);
    replace(this.container, root, tooltip);
  }
}
